// Spec strings (docs/science.md#remedies): names, parameters, defaults, ranges, canonical text.
#include <string>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/registry.hpp"
#include "normalisers/spec.hpp"

namespace {

using sharp::BadInput;
using sharp::norm::format_spec;
using sharp::norm::parse_spec;

std::string error_of(const std::string& text) {
  try {
    parse_spec(text);
  } catch (const BadInput& e) {
    return e.what();
  }
  return "";
}

TEST(NormaliserSpec, ParsesEveryNameWithDefaults) {
  EXPECT_EQ(parse_spec("softmax").param("beta"), 1.0);
  EXPECT_EQ(parse_spec("softmax:beta=4").param("beta"), 4.0);
  EXPECT_EQ(parse_spec("softmax:theta=4").param("beta"), 0.25);
  EXPECT_TRUE(parse_spec("adaptive").params.empty());
  EXPECT_EQ(parse_spec("ssmax:s=0.43").param("s"), 0.43);
  EXPECT_EQ(parse_spec("topk:k=3").param("k"), 3.0);
  EXPECT_EQ(parse_spec("argmax").name, "argmax");
  EXPECT_TRUE(parse_spec("sparsemax").params.empty());
  EXPECT_TRUE(parse_spec("entmax15").params.empty());
  EXPECT_EQ(parse_spec("entmax:alpha=2").param("alpha"), 2.0);
  const auto as = parse_spec("asentmax:b=0.5:gamma=1");
  EXPECT_EQ(as.param("b"), 0.5);
  EXPECT_EQ(as.param("gamma"), 1.0);
  EXPECT_EQ(as.param("delta"), 1.0);
  EXPECT_EQ(parse_spec("asentmax:gamma=0.5:b=1:delta=0.5").param("delta"), 0.5);
  EXPECT_EQ(parse_spec("stieltjes:q=1").param("q"), 1.0);
  EXPECT_EQ(parse_spec(" entmax : alpha = 1.25 ").param("alpha"), 1.25);
}

TEST(NormaliserSpec, CanonicalTextRoundTrips) {
  for (const char* text : {"softmax:beta=0.25", "adaptive", "ssmax:s=0.43", "topk:k=3", "argmax",
                           "sparsemax", "entmax15", "entmax:alpha=1.25", "asentmax:b=1:gamma=0.5:delta=0.5",
                           "stieltjes:q=16"}) {
    EXPECT_EQ(format_spec(parse_spec(text)), text);
    EXPECT_EQ(parse_spec(format_spec(parse_spec(text))), parse_spec(text));
  }
  EXPECT_EQ(format_spec(parse_spec("softmax")), "softmax:beta=1");
  EXPECT_EQ(format_spec(parse_spec("asentmax:gamma=1:b=0.5")), "asentmax:b=0.5:gamma=1:delta=1");
  EXPECT_EQ(format_spec(parse_spec("softmax:theta=0.1")), "softmax:beta=10");
}

TEST(NormaliserSpec, BadSpecsNameTheProblem) {
  EXPECT_NE(error_of("softmix").find("unknown normaliser 'softmix'"), std::string::npos);
  EXPECT_NE(error_of("softmix").find("(allowed: adaptive, argmax, asentmax, asentmax_query, entmax, entmax15, softmax, sparsemax, "
                                     "ssmax, stieltjes, topk)"),
            std::string::npos);
  EXPECT_NE(error_of("topk:j=3").find("unknown parameter 'j'"), std::string::npos);
  EXPECT_NE(error_of("entmax:alpha=2.5").find("alpha=2.5 out of range (allowed: 1 < alpha <= 2)"), std::string::npos);
  EXPECT_NE(error_of("entmax:alpha=1").find("out of range"), std::string::npos);
  EXPECT_NE(error_of("topk:k=0").find("k=0 out of range"), std::string::npos);
  EXPECT_NE(error_of("topk:k=1.5").find("out of range"), std::string::npos);
  EXPECT_NE(error_of("stieltjes:q=0.5").find("q=0.5 out of range (allowed: q >= 1)"), std::string::npos);
  EXPECT_NE(error_of("stieltjes").find("missing parameter q"), std::string::npos);
  EXPECT_NE(error_of("entmax").find("missing parameter alpha"), std::string::npos);
  EXPECT_NE(error_of("softmax:beta=1:beta=2").find("given twice"), std::string::npos);
  EXPECT_NE(error_of("softmax:beta=1:theta=2").find("given twice"), std::string::npos);
  EXPECT_NE(error_of("softmax:beta=abc").find("not a finite number"), std::string::npos);
  EXPECT_NE(error_of("softmax:beta=nan").find("not a finite number"), std::string::npos);
  EXPECT_NE(error_of("softmax:beta=-1").find("beta > 0"), std::string::npos);
  EXPECT_NE(error_of("softmax:theta=0").find("theta > 0"), std::string::npos);
  EXPECT_NE(error_of("softmax:beta").find("expected key=value"), std::string::npos);
  EXPECT_NE(error_of("adaptive:beta=2").find("unknown parameter 'beta' (parameters: none)"), std::string::npos);
  EXPECT_NE(error_of("asentmax:b=0:gamma=1:delta=0").find("b + delta > 0"), std::string::npos);
  EXPECT_NE(error_of("asentmax:b=-1:gamma=1").find("b >= 0"), std::string::npos);
}

TEST(NormaliserSpec, FactoryBuildsEveryName) {
  for (const sharp::norm::NormaliserEntry* e : sharp::norm::normaliser_entries()) {
    const auto nz = sharp::norm::make_normaliser(e->example);
    EXPECT_EQ(nz->spec().name, e->name);
    // The registry's parameters are the spec's, and what backward differentiates is among them.
    EXPECT_EQ(nz->spec().params.size(), e->parameters.size()) << e->name;
    for (const std::string& p : nz->parameter_names()) EXPECT_NE(e->parameter(p), nullptr) << e->name << ":" << p;
  }
  EXPECT_EQ(sharp::norm::make_normaliser("softmax")->parameter_names(), std::vector<std::string>{"beta"});
  EXPECT_EQ(sharp::norm::make_normaliser("asentmax:b=1:gamma=1")->parameter_names(),
            (std::vector<std::string>{"b", "gamma", "delta"}));
  EXPECT_TRUE(sharp::norm::make_normaliser("adaptive")->parameter_names().empty());
}

}  // namespace

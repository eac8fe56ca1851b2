// The normaliser registry and the softmax family's temperature (lib/normalisers/registry.hpp,
// temperature.hpp, docs/architecture.md#adding-a-remedy): ranges at their boundaries, every entry's
// example and learnable parameters (their derivative against finite differences), refused
// registrations, the three temperature rules, and the temperature each built-in answers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "normalisers/learned_scalars.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/registry.hpp"
#include "normalisers/softmax_family.hpp"

namespace {

using namespace sharp::norm;
using sharp::BadInput;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(NormaliserRegistry, RangesAtTheirBoundaries) {
  const ParameterRange positive = ParameterRange::above(0.0);
  EXPECT_FALSE(positive.contains(0.0));
  EXPECT_TRUE(positive.contains(1e-300));
  EXPECT_FALSE(positive.contains(kInf));
  EXPECT_FALSE(positive.contains(std::nan("")));
  EXPECT_EQ(positive.text("beta"), "beta > 0");
  const ParameterRange alpha = ParameterRange::above(1.0).at_most(2.0);
  EXPECT_FALSE(alpha.contains(1.0));
  EXPECT_TRUE(alpha.contains(2.0));
  EXPECT_FALSE(alpha.contains(std::nextafter(2.0, 3.0)));
  EXPECT_EQ(alpha.text("alpha"), "1 < alpha <= 2");
  const ParameterRange q = ParameterRange::at_least(1.0);
  EXPECT_TRUE(q.contains(1.0));
  EXPECT_FALSE(q.contains(std::nextafter(1.0, 0.0)));
  EXPECT_EQ(q.text("q"), "q >= 1");
  const ParameterRange k = ParameterRange::integer_at_least(1.0);
  EXPECT_TRUE(k.contains(1.0));
  EXPECT_FALSE(k.contains(1.5));
  EXPECT_FALSE(k.contains(0.0));
  EXPECT_TRUE(k.contains(9.0e15));
  EXPECT_FALSE(k.contains(9.5e15));   // beyond what a double holds exactly
  EXPECT_EQ(k.text("k"), "k an integer >= 1");
  EXPECT_TRUE(ParameterRange::finite().contains(-1e300));
  EXPECT_FALSE(ParameterRange::finite().contains(-kInf));
  EXPECT_EQ(ParameterRange::finite().text("gamma"), "gamma finite");
}

// The spec `example` with parameter `key` written `learn` (added when the example leaves it out).
std::string learning(const std::string& example, const std::string& key) {
  const std::size_t at = example.find(":" + key + "=");
  if (at == std::string::npos) return example + ":" + key + "=learn";
  const std::size_t end = example.find(':', at + 1);
  return example.substr(0, at) + ":" + key + "=learn" + (end == std::string::npos ? "" : example.substr(end));
}

// Every entry: its example builds a normaliser of its name whose spec has exactly the entry's
// parameters; each learnable parameter starts inside its range (or passes the entry's checks) and
// d value / d raw agrees with central differences of value().
TEST(NormaliserRegistry, EveryEntryIsConsistent) {
  const std::vector<const NormaliserEntry*> entries = normaliser_entries();
  ASSERT_GE(entries.size(), 10u);
  for (std::size_t i = 1; i < entries.size(); ++i) EXPECT_LT(entries[i - 1]->name, entries[i]->name);
  std::size_t learnables = 0;
  for (const NormaliserEntry* e : entries) {
    SCOPED_TRACE(e->name);
    const auto nz = make_normaliser(e->example);
    EXPECT_EQ(nz->spec().name, e->name);
    for (const ParameterInfo& p : e->parameters) {
      EXPECT_EQ(nz->spec().params.count(p.key), 1u) << p.key;
      if (p.default_value) {
        EXPECT_TRUE(p.range.contains(*p.default_value)) << p.key;
      }
    }
    EXPECT_EQ(nz->spec().params.size(), e->parameters.size());
    EXPECT_FALSE(e->formula.empty());
    EXPECT_FALSE(e->section.empty());
    for (const LearnableInfo& l : e->learnable) {
      ++learnables;
      const std::vector<std::string> names = nz->parameter_names();
      EXPECT_NE(std::find(names.begin(), names.end(), l.key), names.end()) << l.key << " is not differentiated";
      if (l.shape.empty()) {   // (other shapes: LearnedParametersOtherThanScalarsAreRefused)
        const LearnableSpec spec = parse_learnable_spec(learning(e->example, l.key), 16);
        EXPECT_EQ(spec.learned, std::vector<std::string>{l.key});
        EXPECT_EQ(spec.spec.param(l.key), l.value(l.initial_raw(16)));
      }
      for (const double raw : {-2.0, -0.3, 0.0, 0.7, 3.0}) {
        const double h = 1e-6, numeric = (l.value(raw + h) - l.value(raw - h)) / (2 * h);
        EXPECT_NEAR(l.derivative(raw), numeric, 1e-6 * std::max(1.0, std::abs(numeric))) << l.key << " at " << raw;
      }
    }
  }
  EXPECT_GE(learnables, 4u);
}

TEST(NormaliserRegistry, RefusesBadRegistrationsAndKeepsTheRegistry) {
  const std::size_t before = normaliser_entries().size();
  NormaliserEntry copy = *find_normaliser("sparsemax");
  EXPECT_THROW(register_normaliser(copy), std::logic_error);   // a second "sparsemax"
  copy.name = "Sparse Max";
  EXPECT_THROW(register_normaliser(copy), std::logic_error);   // not a name
  copy.name = "sparsemax_with_a_bad_example";
  copy.example = "sparsemax:k=2";
  EXPECT_THROW(register_normaliser(copy), std::logic_error);   // its example is no spec
  copy.example = copy.name;
  copy.make = nullptr;
  EXPECT_THROW(register_normaliser(copy), std::logic_error);   // no factory
  copy = *find_normaliser("softmax");
  copy.name = "softmax_with_a_stray_alias";
  copy.example = copy.name;
  copy.aliases[0].target = "temperature";
  EXPECT_THROW(register_normaliser(copy), std::logic_error);   // an alias of no parameter
  EXPECT_EQ(normaliser_entries().size(), before);
  EXPECT_EQ(find_normaliser("sparsemax_with_a_bad_example"), nullptr);
  try {
    normaliser_entry("softmix");
    ADD_FAILURE();
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("unknown normaliser 'softmix' (allowed: adaptive, argmax"), std::string::npos);
  }
}

// A learnable parameter of another shape than a scalar (a later per-query form) is refused by the
// trainers' spec parsing with a message, not mistaken for a scalar.
TEST(NormaliserRegistry, LearnedParametersOtherThanScalarsAreRefused) {
  NormaliserEntry e = *find_normaliser("ssmax");
  e.name = "ssmax_with_a_vector_s";
  e.example = e.name + ":s=1";
  e.learnable[0].shape = {"d_model"};
  register_normaliser(e);
  EXPECT_NO_THROW(parse_spec(e.name + ":s=0.5"));
  try {
    parse_learnable_spec(e.name + ":s=learn", 16);
    ADD_FAILURE() << "a [d_model] parameter taken as a scalar";
  } catch (const BadInput& err) {
    EXPECT_NE(std::string(err.what()).find("shape [d_model] per head; the trainers learn scalars only"),
              std::string::npos)
        << err.what();
  }
}

TEST(NormaliserRegistry, LearnableMessagesAndOrder) {
  try {
    parse_learnable_spec("softmax:beta=learn", 16);
    ADD_FAILURE();
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("'beta' cannot be learned (learnable: asentmax:b, asentmax:gamma, "
                                         "entmax:alpha, ssmax:s"),
              std::string::npos)
        << e.what();
  }
  try {
    parse_learnable_spec("ssmax:s=learn", 1);
    ADD_FAILURE();
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("training length >= 2"), std::string::npos) << e.what();
  }
  // Learned parameters come in parameter_names() order, whatever the order in the spec.
  const LearnableSpec s = parse_learnable_spec("asentmax:gamma=learn:b=learn", 16);
  EXPECT_EQ(s.learned, (std::vector<std::string>{"b", "gamma"}));
  EXPECT_EQ(s.index, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(s.spec.param("b"), std::log1p(1.0));   // softplus(0) = ln 2
  EXPECT_EQ(s.spec.param("gamma"), 0.0);
  EXPECT_EQ(s.spec.param("delta"), 1.0);
}

TEST(Temperature, TheThreeRules) {
  const Temperature fixed = Temperature::fixed(2.5);
  EXPECT_EQ(fixed.beta(1), 2.5);
  EXPECT_EQ(fixed.beta(1000), 2.5);
  EXPECT_FALSE(fixed.depends_on_keys());
  EXPECT_FALSE(fixed.needs_entropy_pass());
  EXPECT_EQ(fixed.beta_derivative(1000), 1.0);
  EXPECT_THROW(fixed.beta_after(1.0), std::logic_error);

  const Temperature log_keys = Temperature::log_keys(0.43);
  EXPECT_EQ(log_keys.beta(16), 0.43 * std::log(16.0));
  EXPECT_EQ(log_keys.beta(1), 0.0);
  EXPECT_TRUE(log_keys.depends_on_keys());
  EXPECT_FALSE(log_keys.needs_entropy_pass());
  EXPECT_EQ(log_keys.beta_derivative(16), std::log(16.0));
  EXPECT_THROW(log_keys.beta_after_derivative(1.0), std::logic_error);

  const Temperature adaptive = Temperature::adaptive();
  EXPECT_EQ(adaptive.beta(100), 1.0);   // the entropy pass runs at beta = 1
  EXPECT_FALSE(adaptive.depends_on_keys());
  EXPECT_TRUE(adaptive.needs_entropy_pass());
  for (const double h : {0.2, 0.5, 0.9, 2.0, 5.0, 7.0}) {
    EXPECT_EQ(adaptive.beta_after(h), adaptive_beta(h)) << h;
    EXPECT_EQ(adaptive.beta_after_derivative(h), adaptive_beta_derivative(h)) << h;
  }
}

// The built-ins answer the temperature of their science section; the other normalisers none.
TEST(Temperature, WhatEachNormaliserAnswers) {
  const auto softmax = make_normaliser("softmax:theta=0.25");
  ASSERT_NE(softmax->temperature(), nullptr);
  EXPECT_EQ(softmax->temperature()->beta(7), 4.0);
  const auto ssmax = make_normaliser("ssmax:s=0.5");
  ASSERT_NE(ssmax->temperature(), nullptr);
  EXPECT_EQ(ssmax->temperature()->beta(64), 0.5 * std::log(64.0));
  const auto adaptive = make_normaliser("adaptive");
  ASSERT_NE(adaptive->temperature(), nullptr);
  EXPECT_TRUE(adaptive->temperature()->needs_entropy_pass());
  for (const char* other : {"topk:k=2", "argmax", "sparsemax", "entmax15", "entmax:alpha=1.3",
                            "asentmax:b=1:gamma=1", "stieltjes:q=2"})
    EXPECT_EQ(make_normaliser(other)->temperature(), nullptr) << other;
}

// row_beta: the beta the normaliser takes for one row — the unmasked entries for s·ln(keys), the
// entropy pass's beta for adaptive (as adaptive_row_beta, for double and float rows).
TEST(Temperature, RowBetaCountsUnmaskedEntriesAndRunsTheEntropyPass) {
  const std::vector<double> z = {0.3, -kInf, 1.2, -0.4, -kInf, 2.0, 0.1, 0.0, -1.0, 0.5};
  EXPECT_EQ(row_beta(Temperature::log_keys(0.5), z.data(), z.size()), 0.5 * std::log(8.0));
  EXPECT_EQ(row_beta(Temperature::fixed(3.0), z.data(), z.size()), 3.0);
  const std::vector<double> wide = {0.1, 0.2, 0.15, 0.05, 0.3, 0.25, 0.0, 0.12};   // H > 0.85: beta > 1
  const std::vector<float> wide_f(wide.begin(), wide.end());
  const double beta = row_beta(Temperature::adaptive(), wide.data(), wide.size());
  EXPECT_GT(beta, 1.0);
  EXPECT_EQ(beta, adaptive_row_beta(wide.data(), wide.size()).beta);
  EXPECT_EQ(row_beta(Temperature::adaptive(), wide_f.data(), wide_f.size()),
            adaptive_row_beta(wide_f.data(), wide_f.size()).beta);
}

}  // namespace

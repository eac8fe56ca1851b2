// Declared outputs (runners/output_spec.hpp): templates expand over an in-point list or given
// items, shapes resolve parameter names, and check_record refuses an undeclared, missing or
// mistyped output, or one of another shape, with the experiment and the output in the message.
#include <gtest/gtest.h>

#include <stdexcept>

#include "runners/grid.hpp"
#include "runners/output_spec.hpp"

using namespace sharp::runner;

namespace {

Point point() {
  Point p;
  p.id = "0123456789abcdef";
  p.values = {{"trials", std::int64_t{3}}, {"normaliser", std::string("softmax+adaptive")}, {"width", std::int64_t{2}}};
  return p;
}

std::vector<ParamSpec> params() {
  ParamSpec normaliser = text_param("normaliser", "softmax", "normalisers", {});
  normaliser.list = ListRole::InsidePoint;
  return {integer_param("trials", "3", "trials", 1), normaliser, integer_param("width", "2", "width", 1)};
}

std::vector<OutputSpec> specs() {
  OutputSpec tensor = array_real("param.<tensor>", {"..."}, "", "weights");
  tensor.items = [](const Point& p) {
    return p.integer("width") == 2 ? std::vector<std::string>{"w", "b"} : std::vector<std::string>{"w"};
  };
  return {metric_real("ratio", "", "a ratio"),
          metric_integer("violations", "", "a count"),
          metric_real("accuracy.<normaliser>", "fraction", "accuracy per normaliser"),
          array_real("ratio", {"trials"}, "", "per trial"),
          array_integer("map", {"*", "2"}, "", "a map"),
          tensor};
}

Record good() {
  Record r;
  r.set("ratio", 0.5);
  r.set_count("violations", 0);
  r.set("accuracy.softmax", 0.9);
  r.set("accuracy.adaptive", 0.95);
  r.set_array("ratio", std::vector<double>{1, 2, 3});
  r.arrays["map"] = Array{{4, 2}, std::vector<std::int64_t>(8, 1)};
  r.set_array("param.w", std::vector<double>(6, 0.0), {2, 3});
  r.set_array("param.b", std::vector<double>{0.0, 1.0});
  return r;
}

std::string error_of(const Record& r) {
  try {
    check_record("toy", specs(), point(), r);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(DeclaredOutputs, TemplatesExpandOverTheInPointListAndGivenItems) {
  const auto s = specs();
  std::vector<std::string> names;
  for (const ExpectedOutput& e : expected_outputs(s, point())) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ratio", "violations", "accuracy.softmax", "accuracy.adaptive", "ratio",
                                             "map", "param.w", "param.b"}));
  EXPECT_EQ(expected_outputs(s, point())[4].shape, (std::vector<long long>{3}));
  EXPECT_EQ(expected_outputs(s, point())[5].shape, (std::vector<long long>{-1, 2}));
  EXPECT_NO_THROW(check_declarations("toy", s, params()));
}

TEST(DeclaredOutputs, AMatchingRecordPasses) { EXPECT_EQ(error_of(good()), ""); }

TEST(DeclaredOutputs, EachDamageIsNamedWithExperimentAndOutput) {
  Record r = good();
  r.set("extra", 1.0);
  EXPECT_EQ(error_of(r), "experiment toy: output 'extra' (a metric) is not declared");
  r = good();
  r.set_array("accuracy.softmax", std::vector<double>{1});
  EXPECT_EQ(error_of(r), "experiment toy: output 'accuracy.softmax' (an array) is not declared");
  r = good();
  r.metrics.erase("accuracy.adaptive");
  EXPECT_EQ(error_of(r), "experiment toy: output 'accuracy.adaptive' is missing (declared real metric)");
  r = good();
  r.arrays.erase("param.b");
  EXPECT_EQ(error_of(r), "experiment toy: output 'param.b' is missing (declared real array [...])");
  r = good();
  r.set_count("ratio", 1);
  EXPECT_EQ(error_of(r), "experiment toy: output 'ratio' is an integer metric (declared real metric)");
  r = good();
  r.set_array("map", std::vector<double>(8, 0.0), {4, 2});
  EXPECT_EQ(error_of(r), "experiment toy: output 'map' is a real array (declared integer array [*, 2])");
  r = good();
  r.set_array("ratio", std::vector<double>{1, 2});
  EXPECT_EQ(error_of(r), "experiment toy: output 'ratio' has shape [2], declared [3] (declared real array [trials])");
  r = good();
  r.arrays["map"] = Array{{8}, std::vector<std::int64_t>(8, 1)};
  EXPECT_NE(error_of(r).find("'map' has shape [8], declared [*, 2]"), std::string::npos);
  r = good();
  r.arrays["map"] = Array{{4, 3}, std::vector<std::int64_t>(8, 1)};
  EXPECT_EQ(error_of(r), "experiment toy: output 'map' holds 8 values for shape [4, 3]");
}

TEST(DeclaredOutputs, MalformedDeclarationsAreProgrammingErrors) {
  auto bad = [](std::vector<OutputSpec> s) {
    try {
      check_declarations("toy", s, params());
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(bad({metric_real("x", "", "a"), metric_real("x", "", "b")}).find("'x' twice"), std::string::npos);
  EXPECT_NE(bad({metric_real("x.<tensor>", "", "a")}).find("placeholder <tensor>"), std::string::npos);
  OutputSpec per_point = metric_real("x.<tensor>", "", "a");
  per_point.items = [](const Point&) { return std::vector<std::string>{"w"}; };
  EXPECT_NE(bad({per_point}).find("not an in-point list parameter"), std::string::npos);
  per_point.kind = OutputKind::Array;
  per_point.shape = {"..."};
  EXPECT_EQ(bad({per_point}), "");
  EXPECT_NE(bad({array_real("x", {"steps"}, "", "a")}).find("dimension 'steps'"), std::string::npos);
  EXPECT_NE(bad({array_real("x", {"normaliser"}, "", "a")}).find("dimension 'normaliser'"), std::string::npos);
  EXPECT_NE(bad({metric_real("x", "", "")}).find("without a name or meaning"), std::string::npos);
  // A metric and an array may share a name (a mean and its per-trial values).
  EXPECT_EQ(bad({metric_real("x", "", "a"), array_real("x", {"trials"}, "", "b")}), "");
}

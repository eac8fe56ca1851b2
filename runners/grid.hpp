#pragma once
// Grid parsing and expansion: flag text -> values -> Cartesian product of points, each with a
// stable id; plus the canonical config text and its fingerprint (docs/architecture.md#points-parts-merge-resume).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runners/param_spec.hpp"

namespace sharp::runner {

inline constexpr const char* kSchema = "sharp/1";

// Parses a flag's text: a comma-separated list of values or ranges 2^a..2^b (powers of two, a <= b;
// a single 2^k too), each item first expanded by spec.expand when set. Throws BadInput naming the
// flag and what is allowed. Values are validated with spec.check; duplicates and more than one value
// for a SingleValue parameter are errors. An InsidePoint parameter gives one value, "a+b".
std::vector<Value> parse_values(const ParamSpec& spec, const std::string& text);

// The items of an InsidePoint value: "softmax+adaptive" -> {"softmax", "adaptive"}.
std::vector<std::string> in_point_items(const std::string& value);

struct Axis {
  ParamSpec spec;
  std::vector<Value> values;
};

// One point of the grid: every parameter (grid or fixed) with one value.
struct Point {
  std::size_t index = 0;  // position in grid order
  std::string id;  // 16 hex digits, a hash of experiment, schema and all values
  std::vector<std::pair<std::string, Value>> values;  // in declared order

  const Value& value(const std::string& name) const;  // throws std::out_of_range if absent
  std::int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  std::string describe() const;  // "n=1024 spread=4 theta=1 ..."
};

std::string point_id(const std::string& experiment, const std::vector<std::pair<std::string, Value>>& values);

// The most points one run may have: every point is held in memory (about 0.5 kB each) before any runs.
inline constexpr std::size_t kMaxGridPoints = 1'000'000;

// The number of points of the axes' product, from their sizes alone (nothing is built, no product
// wraps). Throws BadInput naming the axes when it is above kMaxGridPoints.
std::size_t checked_grid_size(const std::vector<Axis>& axes);

class Grid {
 public:
  // `derived`: the ListRole::Derived parameters, appended to every point's values after its id
  // (they are functions of the set values, so they change neither the id nor the fingerprint).
  Grid(std::string experiment, std::vector<Axis> axes, std::vector<ParamSpec> derived = {});

  const std::string& experiment() const { return experiment_; }
  const std::vector<Axis>& axes() const { return axes_; }
  const std::vector<ParamSpec>& derived() const { return derived_; }
  const std::vector<Point>& points() const { return points_; }
  std::size_t size() const { return points_.size(); }
  // "experiment = bounds\nschema = sharp/1\nn = 2,4,8\n..." keys sorted; values in grid order.
  const std::string& config_text() const { return config_text_; }
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  std::string experiment_;
  std::vector<Axis> axes_;
  std::vector<ParamSpec> derived_;
  std::vector<Point> points_;
  std::string config_text_;
  std::string fingerprint_;
};

}  // namespace sharp::runner

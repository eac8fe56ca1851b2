#pragma once
// What a point produces: named scalar metrics and named arrays, each declared by the experiment
// (runners/output_spec.hpp; the runner refuses a record that does not match the declarations).
// The runner stores metrics as /points/<metric> columns and arrays under /arrays/<point id>/.
// A checkpoint's state has the same form but its own type (runners/checkpoint_state.hpp): it is
// not a result and is never checked against the declarations.
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/shaped_array.hpp"

namespace sharp::runner {

using Array = sharp::ShapedArray;

// Named scalars and named arrays with typed setters and getters; the base of Record and
// CheckpointState.
struct NamedValues {
  std::map<std::string, std::variant<double, std::int64_t>> metrics;
  std::map<std::string, Array> arrays;

  void set(const std::string& name, double v) { metrics[name] = v; }
  void set_count(const std::string& name, std::int64_t v) { metrics[name] = v; }
  void set_array(const std::string& name, std::vector<double> v) { arrays[name] = Array{{v.size()}, std::move(v)}; }
  void set_array(const std::string& name, std::vector<std::int64_t> v) {
    arrays[name] = Array{{v.size()}, std::move(v)};
  }
  void set_array(const std::string& name, std::vector<double> v, std::vector<std::size_t> shape) {
    arrays[name] = Array{std::move(shape), std::move(v)};
  }
  double real(const std::string& name) const { return std::get<double>(metrics.at(name)); }
  std::int64_t count(const std::string& name) const { return std::get<std::int64_t>(metrics.at(name)); }
  const std::vector<double>& reals(const std::string& name) const {
    return std::get<std::vector<double>>(arrays.at(name).data);
  }
  const std::vector<std::int64_t>& counts(const std::string& name) const {
    return std::get<std::vector<std::int64_t>>(arrays.at(name).data);
  }
};

// The result of one point.
struct Record : NamedValues {};

}  // namespace sharp::runner

#pragma once
// A training curve for an experiment that trains: entries at chosen steps, each a value of every
// named series, plus the running sums of the current window (steps since the previous entry). The
// entries are outputs (curve_step, curve_<series>); the window sums are checkpoint state only, so a
// resumed run continues the window where it stopped.
#include <map>
#include <string>
#include <vector>

#include "runners/checkpoint_state.hpp"
#include "runners/output_spec.hpp"
#include "runners/record.hpp"

namespace sharp {

struct CurveSeries {
  std::string name, unit, meaning;
};

class TrainingCurve {
public:
  explicit TrainingCurve(std::vector<CurveSeries> series) : series_(std::move(series)) {}

  // Window sums by name (any names; all reset by append()).
  void accumulate(const std::string& sum, double value) { window_[sum] += value; }
  double window(const std::string& sum) const {
    const auto it = window_.find(sum);
    return it == window_.end() ? 0.0 : it->second;
  }
  // A new entry: one value per declared series, by name. Clears the window.
  void append(std::int64_t step, const std::map<std::string, double>& values) {
    steps_.push_back(step);
    for (const CurveSeries& s : series_) values_[s.name].push_back(values.at(s.name));
    window_.clear();
  }
  const std::vector<double>& series(const std::string& name) const { return values_.at(name); }

  std::vector<runner::OutputSpec> outputs() const {
    std::vector<runner::OutputSpec> out = {runner::array_integer(
        "curve_step", {"*"}, "steps", "step of each curve entry")};
    for (const CurveSeries& s : series_)
      out.push_back(runner::array_real("curve_" + s.name, {"*"}, s.unit, s.meaning + ", per curve entry"));
    return out;
  }
  void save(runner::NamedValues& r) const {
    r.set_array("curve_step", steps_);
    for (const CurveSeries& s : series_) r.set_array("curve_" + s.name, values_.count(s.name) ? values_.at(s.name) : std::vector<double>{});
  }
  // Window sums are stored as metrics window.<name> (a checkpoint is never checked against outputs).
  void save_state(runner::CheckpointState& state) const {
    save(state);
    for (const auto& [name, v] : window_) state.set("window." + name, v);
  }
  void load_state(const runner::CheckpointState& state) {
    steps_ = state.counts("curve_step");
    for (const CurveSeries& s : series_) values_[s.name] = state.reals("curve_" + s.name);
    window_.clear();
    for (const auto& [name, v] : state.metrics)
      if (name.rfind("window.", 0) == 0) window_[name.substr(7)] = std::get<double>(v);
  }

private:
  std::vector<CurveSeries> series_;
  std::vector<std::int64_t> steps_;
  std::map<std::string, std::vector<double>> values_;
  std::map<std::string, double> window_;
};

}  // namespace sharp

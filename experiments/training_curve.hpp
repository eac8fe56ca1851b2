#pragma once
// The training curve of both trainers (sharp-train-max, sharp-train-text): an entry at chosen steps
// (every eval_every steps and the last), each one value of every series of the trainer's Entry, plus
// the running sums of the current window (steps since the previous entry). The entries are outputs
// (curve_step, curve_<series>); the window sums are checkpoint state only, so a resumed run continues
// the window where it stopped. A series is a member of Entry and a sum a member of Window, each named
// once in its table, so a misspelt series does not compile.
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "runners/checkpoint_state.hpp"
#include "runners/output_spec.hpp"
#include "runners/record.hpp"

namespace sharp {

// One series of Entry: stored as curve_<name>.
template <class Entry>
struct CurveSeries {
  const char* name;
  double Entry::*values;
  const char* unit;
  const char* meaning;
};

// One window sum of Window: stored in a checkpoint under `key`.
template <class Window>
struct WindowSum {
  const char* key;
  std::variant<double Window::*, std::int64_t Window::*> sum;
};

// Entry: a struct of doubles with `static inline const CurveSeries<Entry> kSeries[]` and
// `kStepMeaning` (curve_step's meaning). Window: default-constructible sums with
// `static inline const WindowSum<Window> kSums[]`.
template <class Entry, class Window>
class TrainingCurve {
 public:
  Window window;  // the trainer adds each step to it; append() starts a new one

  void append(std::int64_t step, const Entry& entry) {
    steps_.push_back(step);
    entries_.push_back(entry);
    window = Window{};
  }
  const std::vector<std::int64_t>& steps() const { return steps_; }
  const std::vector<Entry>& entries() const { return entries_; }
  const Entry& last() const { return entries_.back(); }

  static std::vector<runner::OutputSpec> outputs() {
    std::vector<runner::OutputSpec> out = {runner::array_integer("curve_step", {"*"}, "steps", Entry::kStepMeaning)};
    for (const CurveSeries<Entry>& s : Entry::kSeries)
      out.push_back(runner::array_real(std::string("curve_") + s.name, {"*"}, s.unit,
                                       std::string(s.meaning) + ", per curve entry"));
    return out;
  }
  void save(runner::NamedValues& r) const {
    r.set_array("curve_step", steps_);
    for (const CurveSeries<Entry>& s : Entry::kSeries) {
      std::vector<double> column;
      column.reserve(entries_.size());
      for (const Entry& e : entries_) column.push_back(e.*s.values);
      r.set_array(std::string("curve_") + s.name, std::move(column));
    }
  }
  void save_state(runner::CheckpointState& state) const {
    save(state);
    for (const WindowSum<Window>& w : Window::kSums)
      std::visit([&](auto sum) { set_metric(state, w.key, window.*sum); }, w.sum);
  }
  // A sum the checkpoint lacks is 0 (train-text wrote none right after an entry).
  void load_state(const runner::CheckpointState& state) {
    steps_ = state.counts("curve_step");
    entries_.assign(steps_.size(), Entry{});
    for (const CurveSeries<Entry>& s : Entry::kSeries) {
      const std::vector<double>& column = state.reals(std::string("curve_") + s.name);
      if (column.size() != steps_.size())
        throw runner::BadCheckpoint(std::string("curve_") + s.name + " holds " + std::to_string(column.size()) +
                                    " entries, curve_step " + std::to_string(steps_.size()));
      for (std::size_t i = 0; i < column.size(); ++i) entries_[i].*s.values = column[i];
    }
    window = Window{};
    for (const WindowSum<Window>& w : Window::kSums)
      if (state.metrics.count(w.key))
        std::visit(
            [&](auto sum) { window.*sum = std::get<std::decay_t<decltype(window.*sum)>>(state.metrics.at(w.key)); },
            w.sum);
  }

 private:
  static void set_metric(runner::CheckpointState& state, const char* key, double v) { state.set(key, v); }
  static void set_metric(runner::CheckpointState& state, const char* key, std::int64_t v) { state.set_count(key, v); }

  std::vector<std::int64_t> steps_;
  std::vector<Entry> entries_;  // [entries]
};

}  // namespace sharp

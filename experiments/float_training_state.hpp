#pragma once
// The float32 training state both trainers (sharp-train-max, sharp-train-text) checkpoint:
// parameters and AdamW's two moments, stored as double arrays "params", "adam_m", "adam_v"
// (docs/architecture.md#checkpoints). Widening float to double and back is exact, so a resumed
// training continues bit for bit.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "runners/checkpoint_state.hpp"

namespace sharp {

inline void save_float_training_state(runner::CheckpointState& state, const std::vector<float>& params,
                                      const std::vector<float>& adam_m, const std::vector<float>& adam_v) {
  state.set_array("params", std::vector<double>(params.begin(), params.end()));
  state.set_array("adam_m", std::vector<double>(adam_m.begin(), adam_m.end()));
  state.set_array("adam_v", std::vector<double>(adam_v.begin(), adam_v.end()));
}

inline void load_float_training_state(const runner::CheckpointState& state, std::vector<float>& params,
                                      std::vector<float>& adam_m, std::vector<float>& adam_v) {
  auto narrow_into = [&](const char* name, std::vector<float>& to) {
    const std::vector<double>& from = state.reals(name);
    if (from.size() != to.size())
      throw runner::BadCheckpoint(std::string("'") + name + "' has " + std::to_string(from.size()) +
                                  " values, expected " + std::to_string(to.size()));
    for (std::size_t i = 0; i < from.size(); ++i) {
      if (!std::isfinite(from[i]))  // a training never saves one: it would have failed first
        throw runner::BadCheckpoint(std::string("'") + name + "' holds a value that is not finite");
      to[i] = float(from[i]);  // exact: written from floats
    }
  };
  narrow_into("params", params);
  narrow_into("adam_m", adam_m);
  narrow_into("adam_v", adam_v);
}

// Loads a checkpoint of a training of `steps` steps through `load`, refusing what no run of this point
// can have saved: a step outside [0, steps) (checkpoints are saved before the last step), a missing or
// wrong-length array. Any such error becomes runner::BadCheckpoint: the runner sets the checkpoint
// aside and the training starts over, instead of failing every rerun or ending at once.
template <class Load>
void load_training_checkpoint(const runner::CheckpointState& state, std::int64_t steps, Load&& load) {
  try {
    const std::int64_t step = state.count("step");
    if (step < 0 || step >= steps)
      throw runner::BadCheckpoint("step " + std::to_string(step) + " is outside [0, " + std::to_string(steps) + ")");
    load(step);
  } catch (const runner::BadCheckpoint&) {
    throw;
  } catch (const std::exception& e) {
    throw runner::BadCheckpoint(e.what());
  }
}

}  // namespace sharp

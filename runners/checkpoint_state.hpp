#pragma once
// The state a long point saves to resume after a kill (PointContext::save_checkpoint): named
// scalars and arrays like a Record, but its own type, because it is not a result: it holds what
// the point needs to continue (weights, optimiser moments, running sums), is never checked against
// the declared outputs and never reaches the result file (docs/architecture.md#checkpoints).
// Stored in <point id>.ckpt.h5 under /state/metrics and /state/arrays.
#include <stdexcept>

#include "runners/record.hpp"

namespace sharp::runner {

struct CheckpointState : NamedValues {};

// Thrown by a point that finds the state it loaded inconsistent with itself (a negative step, a step
// beyond the configured steps, arrays of the wrong length): the runner sets the checkpoint aside as
// <id>.ckpt.h5.bad-<k> and runs the point again from the start (docs/architecture.md#checkpoints).
class BadCheckpoint : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sharp::runner

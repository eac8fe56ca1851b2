#pragma once
// The state a long point saves to resume after a kill (PointContext::save_checkpoint): named
// scalars and arrays like a Record, but its own type, because it is not a result: it holds what
// the point needs to continue (weights, optimiser moments, running sums), is never checked against
// the declared outputs and never reaches the result file (docs/architecture.md#checkpoints).
// Stored in <point id>.ckpt.h5 under /state/metrics and /state/arrays.
#include "runners/record.hpp"

namespace sharp::runner {

struct CheckpointState : NamedValues {};

}  // namespace sharp::runner

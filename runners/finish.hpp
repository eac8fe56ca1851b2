#pragma once
// The end of a run, after its points ran (docs/architecture.md#points-parts-merge-resume): a shard
// checks its points, an --only run merges its selection into --only-out, a full run merges the parts
// into the result file and removes them. The same for every runner.
#include "runners/experiment.hpp"
#include "runners/options.hpp"
#include "runners/plan.hpp"

namespace sharp::runner {

// Returns the exit status. `mpi_size` ranks share the merge.
int finish_run(const Experiment& experiment, const Grid& grid, const RunOptions& options, const RunPlan& plan,
               int mpi_size);

}  // namespace sharp::runner

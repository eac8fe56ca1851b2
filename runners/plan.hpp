#pragma once
// The plan of a run (docs/architecture.md#points-parts-merge-resume): what a run has to do, decided
// from the files before any point runs (by rank 0 under MPI), the same for every runner.
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "runners/experiment.hpp"
#include "runners/options.hpp"
#include "runners/output_lock.hpp"

namespace sharp::runner {

struct RunPlan {
  std::optional<int> early_exit;  // set when nothing is to run: the exit status
  std::vector<const Point*> todo;  // points to run, most expensive first
  double total_cost = 0;  // estimated cost of todo
  std::size_t resumed = 0;  // points complete before this run
  std::size_t scope = 0;  // points this run is for: the grid, or this shard's
  std::size_t scope_done = 0;  // of those, complete before this run
  std::shared_ptr<OutputLock> lock;  // held until the plan is destroyed
};

// Prints the output of --dry-run and --status; takes the output's lock (docs/architecture.md#locking);
// throws BadInput for a result or parts directory of another configuration, or a lock held by
// another run; sets damaged part files aside (they run again; runners/resume.hpp); creates the parts
// directory and removes stale temporaries of `todo`.
RunPlan plan_run(const Experiment& experiment, const Grid& grid, const RunOptions& options);

}  // namespace sharp::runner

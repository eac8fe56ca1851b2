#pragma once
// The local runner: a grid of points on one machine with OpenMP, writing point files, resuming,
// merging (docs/architecture.md#points-parts-merge-resume). The MPI and Slurm runners reuse its pieces: the plan
// (which points are complete, which belong to a shard), execute_point() and merge_points().
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runners/experiment.hpp"
#include "runners/options.hpp"

namespace sharp::runner {

enum ExitStatus { kDone = 0, kFailed = 1, kBadInput = 2, kIncomplete = 3 };

// Key of a declared random stream of a point: hash of experiment, stream name, seed and the values
// of the parameters the stream depends on.
std::uint64_t stream_key(const std::string& experiment, const StreamSpec& stream, const Point& point);

// Deterministic shard of each point: longest estimated cost first onto the least-loaded shard
// (ties: lower shard, lower point index), so shards of uneven points take similar time.
std::vector<int> assign_shards(const std::vector<double>& costs, int shards);

// Runs one point with `threads` threads and writes its part file. Throws on failure.
void execute_point(const Experiment& experiment, const Grid& grid, const Point& point,
                   const RunOptions& options, const std::string& parts_dir, int threads);

// What a run has to do, decided from the files before any point runs (by rank 0 under MPI).
// Prints the output of --dry-run and --status; throws BadInput for a result or parts directory of
// another configuration; creates the parts directory and removes stale temporaries of `todo`.
struct RunPlan {
  std::optional<int> early_exit;   // set when nothing is to run: the exit status
  std::vector<const Point*> todo;  // points to run, most expensive first
  double total_cost = 0;           // estimated cost of todo
  std::size_t resumed = 0;         // points complete before this run
};
RunPlan plan_run(const Experiment& experiment, const Grid& grid, const RunOptions& options);

// After the points ran: a shard checks its points, a full run merges (and removes the parts).
int finish_run(const Experiment& experiment, const Grid& grid, const RunOptions& options, const RunPlan& plan,
               int mpi_size);

// The whole local run: --status, --dry-run, --merge-only, --shard, resume, merge. Returns the exit status.
int run_local(const Experiment& experiment, const Grid& grid, const RunOptions& options);

}  // namespace sharp::runner

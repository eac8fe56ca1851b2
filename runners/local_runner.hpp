#pragma once
// The local runner: a grid of points on one machine with OpenMP, writing point files, resuming,
// merging (docs/architecture.md#points-parts-merge-resume). The MPI and Slurm runners reuse its pieces: the plan
// (which points are complete, which belong to a shard), execute_point() and merge_points().
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runners/experiment.hpp"
#include "runners/options.hpp"
#include "runners/output_lock.hpp"

namespace sharp::runner {

enum ExitStatus { kDone = 0, kFailed = 1, kBadInput = 2, kIncomplete = 3 };

// Key of a declared random stream of a point: hash of experiment, stream name, seed and the values
// of the parameters the stream depends on.
std::uint64_t stream_key(const std::string& experiment, const StreamSpec& stream, const Point& point);

// Deterministic shard of each point: longest estimated cost first onto the least-loaded shard
// (ties: lower shard, lower point index), so shards of uneven points take similar time.
std::vector<int> assign_shards(const std::vector<double>& costs, int shards);

class Progress;

// Runs one point with `threads` threads and writes its part file. Throws on failure. The point's
// progress lines go to `progress` (nullptr: straight to stderr unless --quiet).
void execute_point(const Experiment& experiment, const Grid& grid, const Point& point,
                   const RunOptions& options, const std::string& parts_dir, int threads,
                   Progress* progress = nullptr);

// What a run has to do, decided from the files before any point runs (by rank 0 under MPI).
// Prints the output of --dry-run and --status; takes the output's lock (docs/architecture.md#locking);
// throws BadInput for a result or parts directory of another configuration, or a lock held by
// another run; sets damaged part files aside (they run again); creates the parts directory and
// removes stale temporaries of `todo`.
struct RunPlan {
  std::optional<int> early_exit;   // set when nothing is to run: the exit status
  std::vector<const Point*> todo;  // points to run, most expensive first
  double total_cost = 0;           // estimated cost of todo
  std::size_t resumed = 0;         // points complete before this run
  std::size_t scope = 0;           // points this run is for: the grid, or this shard's
  std::size_t scope_done = 0;      // of those, complete before this run
  std::shared_ptr<OutputLock> lock;  // held until the plan is destroyed
};

// After SIGINT/SIGTERM: "interrupted: K of N points done, rerun the same command to resume" on
// stderr; returns kIncomplete. `finished_now` points of plan.todo completed in this run.
int report_interrupt(const Experiment& experiment, const RunPlan& plan, std::size_t finished_now);

// After a failed point: says what failed and which points are safe (a full disk in so many words).
void report_failure(const Experiment& experiment, const RunOptions& options, const RunPlan& plan,
                    std::size_t finished_now, bool disk_full);

// True when an error's text says the disk (or quota) is full.
bool is_disk_full(const std::string& what);
RunPlan plan_run(const Experiment& experiment, const Grid& grid, const RunOptions& options);

// After the points ran: a shard checks its points, a full run merges (and removes the parts).
int finish_run(const Experiment& experiment, const Grid& grid, const RunOptions& options, const RunPlan& plan,
               int mpi_size);

// The whole local run: --status, --dry-run, --merge-only, --shard, resume, merge. Returns the exit status.
int run_local(const Experiment& experiment, const Grid& grid, const RunOptions& options);

}  // namespace sharp::runner

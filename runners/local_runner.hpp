#pragma once
// The local runner: a grid of points on one machine with OpenMP, writing point files, resuming,
// merging (DESIGN.md "Runs, files, resume"). The MPI and Slurm runners reuse its pieces: the plan
// (which points are complete, which belong to a shard), execute_point() and merge_points().
#include <cstdint>
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

// The whole local run: --status, --dry-run, --merge-only, --shard, resume, merge. Returns the exit status.
int run_local(const Experiment& experiment, const Grid& grid, const RunOptions& options);

}  // namespace sharp::runner

#pragma once
// Which shard runs which point under --shard I/N (docs/architecture.md#points-parts-merge-resume):
// decided from the points' estimated costs alone, so every shard of a Slurm array computes the same
// assignment without talking to the others.
#include <vector>

#include "runners/experiment.hpp"
#include "runners/options.hpp"

namespace sharp::runner {

// Deterministic shard of each point: longest estimated cost first onto the least-loaded shard
// (ties: lower shard, lower point index), so shards of uneven points take similar time.
std::vector<int> assign_shards(const std::vector<double>& costs, int shards);

// The shard of every grid point under --shard I/N (all 0 without it).
std::vector<int> shard_owners(const Experiment& experiment, const Grid& grid, const RunOptions& options);

}  // namespace sharp::runner

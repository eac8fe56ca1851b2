#pragma once
// Executing one point (docs/architecture.md#points-parts-merge-resume): its random streams, its
// checkpoints, its record checked against the declarations, and its part file. The same for every
// runner: the local runner's threads, an MPI rank, a Slurm array task.
#include <cstdint>
#include <string>

#include "runners/experiment.hpp"
#include "runners/options.hpp"

namespace sharp::runner {

class Progress;

// Key of a declared random stream of a point: hash of experiment, stream name, seed and the values
// of the parameters the stream depends on.
std::uint64_t stream_key(const std::string& experiment, const StreamSpec& stream, const Point& point);

// Runs one point with `threads` threads and writes its part file. Throws on failure. The point's
// progress lines go to `progress` (nullptr: straight to stderr unless --quiet).
void execute_point(const Experiment& experiment, const Grid& grid, const Point& point, const RunOptions& options,
                   const std::string& parts_dir, int threads, Progress* progress = nullptr);

}  // namespace sharp::runner

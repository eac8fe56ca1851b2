#pragma once
// The local runner: the grid's points on one machine, one OpenMP loop over them
// (docs/architecture.md#points-parts-merge-resume). What every runner shares has its own file: the
// plan and resume (runners/plan.hpp, runners/resume.hpp, runners/shard_assignment.hpp), executing one
// point (runners/point_execution.hpp), the end of a run (runners/finish.hpp) and its exit status
// (runners/exit_status.hpp). The MPI runner (runners/mpi_runner.hpp) deals the same points over ranks.
#include "runners/experiment.hpp"
#include "runners/options.hpp"

namespace sharp::runner {

// The whole local run: --status, --dry-run, --merge-only, --shard, resume, merge. Returns the exit status.
int run_local(const Experiment& experiment, const Grid& grid, const RunOptions& options);

}  // namespace sharp::runner

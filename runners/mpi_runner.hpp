#pragma once
// The grid over MPI ranks (docs/architecture.md#mpi-dealer): rank 0 plans from the files, a dealer thread on rank 0
// hands out points one at a time (most expensive first) to whichever rank asks, every rank — rank 0
// included — runs its points with --threads OpenMP threads and writes their part files, and rank 0
// merges. A failure on any rank aborts the whole job with a message naming the rank and the point.
#include "runners/experiment.hpp"
#include "runners/mpi_session.hpp"
#include "runners/options.hpp"

namespace sharp::runner {

int run_mpi(const Experiment& experiment, const Grid& grid, const RunOptions& options, const MpiSession& mpi);

}  // namespace sharp::runner

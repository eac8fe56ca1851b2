#include "runners/mpi_session.hpp"

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace sharp::runner {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

}  // namespace

bool launched_by_mpi_launcher() {
  // mpirun/orterun (OpenMPI), PMIx (srun --mpi=pmix, prterun), PMI-1/2 (MPICH, srun --mpi=pmi2),
  // and any srun step of more than one task (so a wrong launcher is caught, not duplicated).
  if (env("OMPI_COMM_WORLD_SIZE") || env("PMIX_RANK") || env("PMI_RANK") || env("PMI_SIZE")) return true;
  const char* tasks = env("SLURM_STEP_NUM_TASKS");
  return tasks && std::atoi(tasks) > 1 && env("SLURM_STEP_ID");
}

MpiSession::MpiSession(int* argc, char*** argv) {
  if (!launched_by_mpi_launcher()) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (provided < MPI_THREAD_SERIALIZED) {
    if (rank_ == 0)
      std::fprintf(stderr, "sharp: this MPI library provides thread level %d, the dealer needs MPI_THREAD_SERIALIZED\n",
                   provided);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

MpiSession::~MpiSession() {
  if (active_) MPI_Finalize();
}

std::string MpiSession::check_rank_count() const {
  // mpirun sets OMPI_COMM_WORLD_SIZE and starts its daemons through Slurm itself, so the step's
  // task count is then the node count, not the rank count: only a direct srun launch is checked.
  if (env("OMPI_COMM_WORLD_SIZE")) return "";
  const char* tasks = env("SLURM_STEP_NUM_TASKS");
  if (!tasks || !env("SLURM_STEP_ID")) return "";
  const int expected = std::atoi(tasks);
  if (expected == size_) return "";
  return "Slurm started " + std::to_string(expected) + " tasks but MPI sees " + std::to_string(size_) +
         " rank(s): the launcher started independent singletons. Use `srun --mpi=pmix` (Debian's OpenMPI "
         "needs PMIx) or mpirun inside the allocation";
}

void MpiSession::abort(int status) const {
  if (active_) MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

}  // namespace sharp::runner

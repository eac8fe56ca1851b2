#pragma once
// MPI for the experiment binaries, only when a launcher started them (mpirun, or srun --mpi=pmix):
// a binary run by hand never calls MPI_Init and behaves exactly as the local runner.
#include <string>

namespace sharp::runner {

class MpiSession {
 public:
  // Initialises MPI (MPI_THREAD_SERIALIZED: rank 0's dealer thread makes the MPI calls while the
  // main thread computes) when the environment shows a launcher; otherwise does nothing.
  MpiSession(int* argc, char*** argv);
  ~MpiSession();  // MPI_Finalize
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Under srun, the number of tasks Slurm started; a launcher that starts R singletons (plain srun
  // without --mpi=pmix) gives size 1 here but R tasks: an error, not R duplicate runs.
  // Returns an error text, or "" when the rank count is consistent.
  std::string check_rank_count() const;
  // Ends every rank of the job at once (a failure on one rank must not leave others hanging).
  [[noreturn]] void abort(int status) const;

 private:
  bool active_ = false;
  int rank_ = 0, size_ = 1;
};

// True when a launcher's environment variables are present.
bool launched_by_mpi_launcher();

}  // namespace sharp::runner

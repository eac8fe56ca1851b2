#include "runners/mpi_runner.hpp"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "core/errors.hpp"
#include "runners/exit_status.hpp"
#include "runners/finish.hpp"
#include "runners/interrupt.hpp"
#include "runners/plan.hpp"
#include "runners/point_execution.hpp"
#include "runners/progress.hpp"

namespace sharp::runner {
namespace {

// Messages between workers and the dealer (rank 0).
enum Tag : int {
  kTagReady = 1,  // worker -> dealer: int = grid index of the point just finished, or -1 at start
  kTagFailed = 2,  // worker -> dealer: char[] = what failed
  kTagAssign = 3,  // dealer -> worker: int = grid index of the next point, or -1 = stop
  kTagInterrupted = 4,  // worker -> dealer: as kTagReady, and the worker got SIGINT/SIGTERM: all stop
  kTagStop = 5,  // dealer -> worker: int (unused) = the run is interrupted; stop the current point
};

// The shared queue of rank 0: the dealer thread and rank 0's own loop both take from it.
class Queue {
 public:
  explicit Queue(const std::vector<const Point*>& todo) : todo_(todo) {}
  const Point* next() {
    const std::size_t i = next_.fetch_add(1);
    return i < todo_.size() ? todo_[i] : nullptr;
  }

 private:
  const std::vector<const Point*>& todo_;
  std::atomic<std::size_t> next_{0};
};

std::string failure_text(int rank, const Point& p, const std::string& what) {
  return "rank " + std::to_string(rank) + ", point " + p.id + " (" + p.describe() + "): " + what;
}

// A failure of rank 0's own point, reported to the dealer thread, which alone may call MPI.
struct Rank0Failure {
  std::atomic<bool> failed{false};
  std::string text;
};

[[noreturn]] void abort_job(const Experiment& experiment, Progress& progress, const std::string& text,
                            const MpiSession& mpi) {
  progress.close();
  std::fprintf(stderr, "sharp-%s: %s\nsharp-%s: aborting all ranks; finished points are kept, rerun to resume\n",
               experiment.name().c_str(), text.c_str(), experiment.name().c_str());
  std::fflush(stderr);
  mpi.abort(kFailed);
}

// Rank 0's dealer thread: answers requests until every worker has been released (told -1) and rank
// 0's own points are done; listening that long lets a released worker that is signalled while it
// waits at the end report it, so that rank 0 stops too. It is the only thread making MPI calls
// while it runs (MPI_THREAD_SERIALIZED), and it polls with short sleeps so that it does not take a
// core from rank 0's own points.
void deal(const Experiment& experiment, const Grid& grid, Queue& queue, Progress& progress, const MpiSession& mpi,
          const Rank0Failure& rank0, const std::atomic<bool>& rank0_done, std::atomic<std::size_t>& finished_now) {
  bool stop_sent = false;
  std::vector<bool> released(mpi.size(), false);  // told -1: that rank has left its loop
  auto workers_working = [&] { return std::count(released.begin() + 1, released.end(), false) > 0; };
  // Rank 0 or one worker was signalled: tell every working rank now, not when its point ends, so a
  // long point on another rank checkpoints and stops as it would on a local run.
  auto send_stops_once = [&] {
    if (!interrupted() || stop_sent) return;
    const int unused = 0;
    for (int r = 1; r < mpi.size(); ++r)
      if (!released[r]) MPI_Send(&unused, 1, MPI_INT, r, kTagStop, MPI_COMM_WORLD);
    stop_sent = true;
  };
  std::vector<std::chrono::steady_clock::time_point> started(mpi.size());
  while (workers_working() || !rank0_done) {
    if (rank0.failed) abort_job(experiment, progress, rank0.text, mpi);
    send_stops_once();
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    if (st.MPI_TAG == kTagFailed) {
      int len = 0;
      MPI_Get_count(&st, MPI_CHAR, &len);
      std::string text(static_cast<std::size_t>(len), '\0');
      MPI_Recv(text.data(), len, MPI_CHAR, st.MPI_SOURCE, kTagFailed, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      abort_job(experiment, progress, text, mpi);
    }
    int finished = -1;
    MPI_Recv(&finished, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st.MPI_TAG == kTagInterrupted) request_interrupt();  // one rank interrupted: every rank stops
    if (released[st.MPI_SOURCE]) continue;  // a released worker's report: it waits for no answer
    const auto now = std::chrono::steady_clock::now();
    if (finished >= 0) {
      ++finished_now;
      const Point& p = grid.points()[static_cast<std::size_t>(finished)];
      progress.finished(p.id, p.describe() + " [rank " + std::to_string(st.MPI_SOURCE) + "]",
                        experiment.estimated_cost(p),
                        std::chrono::duration<double>(now - started[st.MPI_SOURCE]).count());
    }
    send_stops_once();  // before the answer: a rank told -1 finds its stop message already there
    const Point* p = interrupted() ? nullptr : queue.next();
    int assign = p ? static_cast<int>(p->index) : -1;
    started[st.MPI_SOURCE] = now;
    MPI_Send(&assign, 1, MPI_INT, st.MPI_SOURCE, kTagAssign, MPI_COMM_WORLD);
    if (!p) released[st.MPI_SOURCE] = true;
  }
}

// Receives the dealer's stop message if one has arrived; it turns into an interrupt of this rank.
void receive_stop_if_sent() {
  int flag = 0;
  MPI_Iprobe(0, kTagStop, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  if (!flag) return;
  int unused = 0;
  MPI_Recv(&unused, 1, MPI_INT, 0, kTagStop, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  request_interrupt();
}

// Runs one point on a thread of its own while this (the only MPI-calling) thread listens for the
// dealer's stop message; rethrows what the point threw.
void execute_point_listening(const Experiment& experiment, const Grid& grid, const Point& p, const RunOptions& options,
                             const std::string& parts_dir) {
  std::atomic<bool> done{false};
  std::exception_ptr error;
  std::thread point([&] {
    try {
      execute_point(experiment, grid, p, options, parts_dir, options.threads);
    } catch (...) {
      error = std::current_exception();
    }
    done = true;
  });
  while (!done) {
    receive_stop_if_sent();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  point.join();
  if (error) std::rethrow_exception(error);
}

// Returns whether the dealer was told of an interrupt (the tag of the last message sent): a signal
// that arrives after that message, before the -1 comes back, is still to be reported.
bool work(const Experiment& experiment, const Grid& grid, const RunOptions& options, const MpiSession& mpi) {
  const std::string parts_dir = options.out + ".parts";
  int finished = -1;
  for (;;) {
    const bool reporting_interrupt = interrupted();
    MPI_Send(&finished, 1, MPI_INT, 0, reporting_interrupt ? kTagInterrupted : kTagReady, MPI_COMM_WORLD);
    int assign = -1;
    MPI_Recv(&assign, 1, MPI_INT, 0, kTagAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (assign < 0) {
      receive_stop_if_sent();  // sent before the -1 when the run was interrupted: leave none behind
      return reporting_interrupt;
    }
    const Point& p = grid.points()[static_cast<std::size_t>(assign)];
    try {
      execute_point_listening(experiment, grid, p, options, parts_dir);
    } catch (const PointInterrupted&) {
      finished = -1;  // saved its checkpoint; the next message tells the dealer to stop everyone
      continue;
    } catch (const std::exception& e) {
      const std::string text = failure_text(mpi.rank(), p, e.what());
      MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, 0, kTagFailed, MPI_COMM_WORLD);
      // The dealer aborts the job; wait for it rather than racing it to an exit.
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    finished = assign;
  }
}

// A released worker waits at the final barrier for rank 0's last points; a signal it has not yet
// reported (`reported`: its last message to the dealer already said so) is reported once, so that
// rank 0 stops them, as a signal to any rank stops the whole run.
void wait_for_the_others(const MpiSession& mpi, bool reported) {
  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  for (int done = 0;;) {
    MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (interrupted() && !reported && mpi.size() > 1) {
      const int none = -1;
      MPI_Send(&none, 1, MPI_INT, 0, kTagInterrupted, MPI_COMM_WORLD);
      reported = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

int run_mpi(const Experiment& experiment, const Grid& grid, const RunOptions& options, const MpiSession& mpi) {
  // Rank 0 decides from the files; the others learn the outcome (an exit status or "run").
  RunPlan plan;
  int decision = -1;  // -1: run the points; otherwise every rank exits with this status
  std::string bad_input;
  if (mpi.rank() == 0) {
    try {
      plan = plan_run(experiment, grid, options);
      if (plan.early_exit) decision = *plan.early_exit;
    } catch (const BadInput& e) {
      bad_input = e.what();
      decision = kBadInput;
    }
  }
  MPI_Bcast(&decision, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (decision == kBadInput && mpi.rank() == 0) throw BadInput(bad_input);
  if (decision >= 0) return decision;

  if (mpi.rank() != 0) {
    const bool reported = work(experiment, grid, options, mpi);
    wait_for_the_others(mpi, reported);
    int stopped = 0;  // rank 0 says whether the run was interrupted: every rank exits alike
    MPI_Bcast(&stopped, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return stopped ? kIncomplete : kDone;
  }

  Queue queue(plan.todo);
  Progress progress(plan.todo.size(), plan.total_cost, options.quiet);
  Rank0Failure rank0;
  std::atomic<std::size_t> finished_now{0};
  std::thread dealer;
  std::atomic<bool> rank0_done{false};
  if (mpi.size() > 1)
    dealer = std::thread([&] { deal(experiment, grid, queue, progress, mpi, rank0, rank0_done, finished_now); });
  const std::string parts_dir = options.out + ".parts";
  while (!interrupted()) {
    const Point* p = queue.next();
    if (!p) break;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      execute_point(experiment, grid, *p, options, parts_dir, options.threads, &progress);
      ++finished_now;
    } catch (const PointInterrupted&) {
      break;
    } catch (const std::exception& e) {
      if (!dealer.joinable()) abort_job(experiment, progress, failure_text(0, *p, e.what()), mpi);
      rank0.text = failure_text(0, *p, e.what());
      rank0.failed = true;  // the dealer aborts the job
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    progress.finished(p->id, p->describe() + " [rank 0]", experiment.estimated_cost(*p),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  rank0_done = true;
  if (dealer.joinable()) dealer.join();
  progress.close();
  // The workers wait in MPI_Ibarrier (wait_for_the_others); a blocking barrier would not match it.
  MPI_Request barrier;
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  int stopped = interrupted() ? 1 : 0;
  MPI_Bcast(&stopped, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (stopped) return report_interrupt(experiment, plan, finished_now);
  return finish_run(experiment, grid, options, plan, mpi.size());
}

}  // namespace sharp::runner

#pragma once
// The one parallel loop of the library: body(i) for every i in [0, count) on OpenMP threads; after
// the loop the error of the lowest failing index is rethrown (LowestIndexError), whatever the
// schedule or thread count, so a run that fails reports the same error every time. An exception
// never leaves the OpenMP region (that is std::terminate: exit 134, no message).
//
//   parallel_for(trials, {"weight-bound/trials", threads}, [&](std::size_t t) { ... });
//   parallel_for(chunks, {"trainer/chunks", threads}, [&](std::size_t c, int thread) { ws[thread] ... });
//
// The second form passes the thread's index in this loop's team, 0 .. threads-1 (0 when the loop
// runs on the calling thread): index per-thread workspaces with it, never with omp_get_thread_num(),
// which inside an enclosing team (the runner's points) names the outer thread.
//
// Fault injection for the tests: SHARP_INJECT_LOOP_FAILURE=<loop name>[@<index>] makes iteration
// <index> (default 0) of every loop of that name throw (read once per process; tests in the same
// process use set_loop_failure_injection).
#include <omp.h>

#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>

#include "core/lowest_index_error.hpp"

namespace sharp {

struct Loop {
  const char* name;  // "<component>/<what is iterated>", for fault injection and messages
  int threads = 0;  // team size; 0 = OpenMP's default
  std::size_t grain = 1;  // iterations per dynamic chunk; 0 = a static schedule
  bool parallel = true;  // false: on the calling thread (work too small for a team)
};

// Replaces the SHARP_INJECT_LOOP_FAILURE setting ("" = none), for tests.
void set_loop_failure_injection(const std::string& spec);

namespace detail {
inline constexpr std::size_t kNoInjection = std::numeric_limits<std::size_t>::max();
std::size_t injected_failure_index(const char* loop);  // kNoInjection unless this loop is named
[[noreturn]] void throw_injected_failure(const char* loop, std::size_t index);
}  // namespace detail

template <class Body>
void parallel_for(std::size_t count, const Loop& loop, Body&& body) {
  const std::size_t inject = detail::injected_failure_index(loop.name);
  LowestIndexError failure;
  auto guarded = [&](std::size_t i, int thread) {
    try {
      if (i == inject) detail::throw_injected_failure(loop.name, i);
      if constexpr (std::is_invocable_v<Body&, std::size_t, int>)
        body(i, thread);
      else
        body(i);
    } catch (...) {
      failure.record(i);
    }
  };
  const int team = loop.threads > 0 ? loop.threads : omp_get_max_threads();
  if (!loop.parallel || team <= 1 || count <= 1) {
    for (std::size_t i = 0; i < count && !failure.any(); ++i) guarded(i, 0);  // the first failure is the lowest
  } else if (loop.grain == 0) {
#pragma omp parallel for num_threads(team) schedule(static)
    for (std::size_t i = 0; i < count; ++i) guarded(i, omp_get_thread_num());
  } else {
    const std::size_t grain = loop.grain;
#pragma omp parallel for num_threads(team) schedule(dynamic, grain)
    for (std::size_t i = 0; i < count; ++i) guarded(i, omp_get_thread_num());
  }
  failure.rethrow_if_any();
}

}  // namespace sharp

#pragma once
// Runs body(item, thread) for items 0 … count−1 on the OpenMP threads (dynamic schedule, one item at a
// time) and rethrows the error of the lowest failing item, so a failure reads the same for any thread
// count. Items are fixed units of work (row chunks, attention tiles); BLAS inside a multi-thread
// region runs serially, so results do not depend on the thread count. `work` (about the flops of
// all items) below kParallelWork runs on the calling thread: a parallel region costs microseconds,
// and much more when the machine is oversubscribed.
#include <omp.h>

#include <cstddef>

#include "core/parallel_for.hpp"

namespace sharp::transformer {

inline constexpr std::size_t kParallelWork = std::size_t(1) << 22;

template <class Body>
void parallel_items(std::size_t count, std::size_t work, Body&& body) {
  parallel_for(count, Loop{"transformer/items", 0, 1, work >= kParallelWork},
               [&](std::size_t i, int thread) { body(i, std::size_t(thread)); });
}

}  // namespace sharp::transformer

#include "nn/chunk_gradients.hpp"

#include <algorithm>

#include "core/parallel_for.hpp"
#include "nn/omp_threads.hpp"

namespace sharp::nn {

void sum_chunk_gradients(float* out, const std::vector<std::vector<float>>& chunks, std::size_t count,
                         std::size_t size, int threads) {
  OmpThreadsScope scope(threads);
  constexpr std::size_t kSlice = 4096;
  parallel_for((size + kSlice - 1) / kSlice, Loop{"nn/gradient-slices", threads, 0}, [&](std::size_t slice) {
    const std::size_t first = slice * kSlice, n = std::min(kSlice, size - first);
    double sum[kSlice];
    for (std::size_t j = 0; j < n; ++j) sum[j] = double(chunks[0][first + j]);
    for (std::size_t c = 1; c < count; ++c) {
      const float* g = chunks[c].data() + first;
      for (std::size_t j = 0; j < n; ++j) sum[j] += double(g[j]);
    }
    for (std::size_t j = 0; j < n; ++j) out[first + j] = float(sum[j]);
  });
}

}  // namespace sharp::nn

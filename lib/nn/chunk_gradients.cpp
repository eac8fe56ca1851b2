#include "nn/chunk_gradients.hpp"

#include <algorithm>

#include "nn/omp_threads.hpp"

namespace sharp::nn {

void sum_chunk_gradients(float* out, const std::vector<std::vector<float>>& chunks, std::size_t count,
                         std::size_t size, int threads) {
  OmpThreadsScope scope(threads);
  constexpr std::size_t kSlice = 4096;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t first = 0; first < size; first += kSlice) {
    const std::size_t n = std::min(kSlice, size - first);
    double sum[kSlice];
    for (std::size_t j = 0; j < n; ++j) sum[j] = double(chunks[0][first + j]);
    for (std::size_t c = 1; c < count; ++c) {
      const float* g = chunks[c].data() + first;
      for (std::size_t j = 0; j < n; ++j) sum[j] += double(g[j]);
    }
    for (std::size_t j = 0; j < n; ++j) out[first + j] = float(sum[j]);
  }
}

}  // namespace sharp::nn

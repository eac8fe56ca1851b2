#include "nn/chunk_gradients.hpp"

#include <algorithm>
#include <cmath>

#include "core/parallel_for.hpp"
#include "nn/omp_threads.hpp"

namespace sharp::nn {

void sum_chunk_gradients(float* out, const std::vector<std::vector<float>>& chunks, std::size_t count, std::size_t size,
                         int threads) {
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

double sum_and_clear_chunk_gradients(float* out, std::vector<std::vector<float>>& chunks, std::size_t count,
                                     std::size_t size, int threads) {
  OmpThreadsScope scope(threads);
  constexpr std::size_t kSlice = 4096, kLanes = 8;
  const std::size_t slices = (size + kSlice - 1) / kSlice;
  std::vector<double> squares(slices);
  parallel_for(slices, Loop{"nn/gradient-slices", threads, 0}, [&](std::size_t slice) {
    const std::size_t first = slice * kSlice, n = std::min(kSlice, size - first);
    double sum[kSlice];
    float* g0 = chunks[0].data() + first;
    for (std::size_t j = 0; j < n; ++j) sum[j] = double(g0[j]);
    std::fill(g0, g0 + n, 0.0f);
    for (std::size_t c = 1; c < count; ++c) {
      float* g = chunks[c].data() + first;
      for (std::size_t j = 0; j < n; ++j) sum[j] += double(g[j]);
      std::fill(g, g + n, 0.0f);
    }
    double lane[kLanes] = {};
    for (std::size_t j = 0; j < n; ++j) {
      const float x = float(sum[j]);
      out[first + j] = x;
      lane[j % kLanes] += double(x) * double(x);
    }
    squares[slice] = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  });
  double total = 0.0;
  for (double x : squares) total += x;
  return std::sqrt(total);
}

}  // namespace sharp::nn

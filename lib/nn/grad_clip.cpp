#include "nn/grad_clip.hpp"

#include <cmath>

#include "core/errors.hpp"

namespace sharp::nn {

double global_norm(const float* g, std::size_t size) {
  // Eight interleaved partial sums (index mod 8), combined in a fixed order: deterministic, and
  // free of one long dependency chain.
  constexpr std::size_t kLanes = 8;
  double lane[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= size; i += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) lane[l] += double(g[i + l]) * double(g[i + l]);
  for (; i < size; ++i) lane[i % kLanes] += double(g[i]) * double(g[i]);
  double s = 0.0;
  for (double x : lane) s += x;
  return std::sqrt(s);
}

double clip_by_global_norm(float* g, std::size_t size, double max_norm) {
  const double norm = global_norm(g, size);
  if (!std::isfinite(norm)) throw NumericError("gradient norm is not finite (NaN or inf in the gradients)");
  if (max_norm > 0.0 && norm > max_norm) {
    const double scale = max_norm / norm;
    for (std::size_t i = 0; i < size; ++i) g[i] = float(double(g[i]) * scale);
  }
  return norm;
}

}  // namespace sharp::nn

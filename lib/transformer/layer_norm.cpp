#include "transformer/layer_norm.hpp"

#include <cmath>

namespace sharp::transformer {
namespace {

// Σ_j term(j) over j < d in eight interleaved double partial sums, added in a fixed tree: the loop
// vectorises (one running sum is a chain of d dependent adds) and the bits do not depend on threads.
template <class F>
double lane_sum(std::size_t d, F&& term) {
  constexpr std::size_t kLanes = 8;
  double acc[kLanes] = {};
  std::size_t j = 0;
  for (; j + kLanes <= d; j += kLanes)
    for (std::size_t l = 0; l < kLanes; ++l) acc[l] += term(j + l);
  for (; j < d; ++j) acc[j % kLanes] += term(j);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace

template <class T>
void layer_norm_forward(T* y, T* mean, T* rstd, const T* x, const T* gain, const T* bias, std::size_t rows,
                        std::size_t d) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    const double mu = lane_sum(d, [&](std::size_t j) { return double(xr[j]); }) / double(d);
    const double v = lane_sum(d, [&](std::size_t j) {
      const double c = double(xr[j]) - mu;
      return c * c;
    });
    const double inv = 1.0 / std::sqrt(v / double(d) + kLayerNormEps);
    T* yr = y + r * d;
    for (std::size_t j = 0; j < d; ++j) yr[j] = T((double(xr[j]) - mu) * inv * double(gain[j]) + double(bias[j]));
    if (mean) mean[r] = T(mu);
    if (rstd) rstd[r] = T(inv);
  }
}

template <class T>
void layer_norm_backward(T* dx, T* dgain, T* dbias, const T* dy, const T* x, const T* mean, const T* rstd,
                         const T* gain, std::size_t rows, std::size_t d) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    const T* dyr = dy + r * d;
    const double mu = double(mean[r]), inv = double(rstd[r]);
    auto xhat = [&](std::size_t j) { return (double(xr[j]) - mu) * inv; };
    auto g = [&](std::size_t j) { return double(dyr[j]) * double(gain[j]); };  // dx̂ = dy ⊙ gain
    for (std::size_t j = 0; j < d; ++j) {
      dgain[j] += T(double(dyr[j]) * xhat(j));
      dbias[j] += dyr[j];
    }
    const double mg = lane_sum(d, g) / double(d);
    const double mgx = lane_sum(d, [&](std::size_t j) { return g(j) * xhat(j); }) / double(d);
    T* dxr = dx + r * d;
    for (std::size_t j = 0; j < d; ++j) dxr[j] = T(inv * (g(j) - mg - xhat(j) * mgx));
  }
}

template void layer_norm_forward<float>(float*, float*, float*, const float*, const float*, const float*, std::size_t,
                                        std::size_t);
template void layer_norm_forward<double>(double*, double*, double*, const double*, const double*, const double*,
                                         std::size_t, std::size_t);
template void layer_norm_backward<float>(float*, float*, float*, const float*, const float*, const float*, const float*,
                                         const float*, std::size_t, std::size_t);
template void layer_norm_backward<double>(double*, double*, double*, const double*, const double*, const double*,
                                          const double*, const double*, std::size_t, std::size_t);

}  // namespace sharp::transformer

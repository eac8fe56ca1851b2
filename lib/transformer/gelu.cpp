#include "transformer/gelu.hpp"

#include <algorithm>

#include <xsimd/xsimd.hpp>

namespace sharp::transformer {
namespace {

constexpr double kInvSqrt2Pi = 0.3989422804014327;   // 1/√(2π)
using FloatBatch = xsimd::batch<float>;
constexpr std::size_t kLanes = FloatBatch::size;

// Calls f(batch index, batch) on full batches of x, then on the tail padded with zeros; f returns
// the result batch, stored to out (the padding's results are dropped).
template <class F>
void for_batches(float* out, const float* x, std::size_t count, F&& f) {
  std::size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) f(i, FloatBatch::load_unaligned(x + i)).store_unaligned(out + i);
  if (i == count) return;
  alignas(64) float buf[kLanes] = {};
  std::copy(x + i, x + count, buf);
  const FloatBatch r = f(i, FloatBatch::load_aligned(buf));
  r.store_aligned(buf);
  std::copy(buf, buf + (count - i), out + i);
}

}  // namespace

void gelu_forward(double* y, const double* x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) y[i] = 0.5 * x[i] * (1.0 + std::erf(x[i] * M_SQRT1_2));
}

void gelu_backward(double* dx, const double* dy, const double* x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const double v = x[i], cdf = 0.5 * (1.0 + std::erf(v * M_SQRT1_2));
    dx[i] = dy[i] * (cdf + v * kInvSqrt2Pi * std::exp(-0.5 * v * v));
  }
}

void gelu_forward(float* y, const float* x, std::size_t count) {
  for_batches(y, x, count, [](std::size_t, const FloatBatch& v) {
    return FloatBatch(0.5f) * v * (FloatBatch(1.0f) + xsimd::erf(v * FloatBatch(float(M_SQRT1_2))));
  });
}

void gelu_backward(float* dx, const float* dy, const float* x, std::size_t count) {
  // dx may alias dy: each batch reads its dy before the result is stored over it.
  for_batches(dx, x, count, [&](std::size_t i, const FloatBatch& v) {
    alignas(64) float g[kLanes] = {};
    std::copy(dy + i, dy + std::min(count, i + kLanes), g);
    const FloatBatch cdf = FloatBatch(0.5f) * (FloatBatch(1.0f) + xsimd::erf(v * FloatBatch(float(M_SQRT1_2))));
    const FloatBatch pdf = FloatBatch(float(kInvSqrt2Pi)) * xsimd::exp(FloatBatch(-0.5f) * v * v);
    return FloatBatch::load_aligned(g) * (cdf + v * pdf);
  });
}

}  // namespace sharp::transformer

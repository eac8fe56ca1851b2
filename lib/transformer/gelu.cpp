#include "transformer/gelu.hpp"

#include <algorithm>

#include <xsimd/xsimd.hpp>

namespace sharp::transformer {
namespace {

constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1/√(2π)
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

// 1 + erf(x/√2) = 2Φ(x), and GELU′(x) from it: one expression for each, shared by every entry point.
double two_cdf(double v) { return 1.0 + std::erf(v * M_SQRT1_2); }
double slope_from(double v, double two_cdf) { return 0.5 * two_cdf + v * kInvSqrt2Pi * std::exp(-0.5 * v * v); }
FloatBatch two_cdf(const FloatBatch& v) { return FloatBatch(1.0f) + xsimd::erf(v * FloatBatch(float(M_SQRT1_2))); }
FloatBatch slope_from(const FloatBatch& v, const FloatBatch& two_cdf) {
  const FloatBatch pdf = FloatBatch(float(kInvSqrt2Pi)) * xsimd::exp(FloatBatch(-0.5f) * v * v);
  return FloatBatch(0.5f) * two_cdf + v * pdf;
}

}  // namespace

void gelu_forward(double* y, const double* x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) y[i] = 0.5 * x[i] * two_cdf(x[i]);
}

void gelu_forward_with_slope(double* y, double* slope, const double* x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const double v = x[i], c = two_cdf(v);
    y[i] = 0.5 * v * c;
    slope[i] = slope_from(v, c);
  }
}

void gelu_backward(double* dx, const double* dy, const double* x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) dx[i] = dy[i] * slope_from(x[i], two_cdf(x[i]));
}

void gelu_forward(float* y, const float* x, std::size_t count) {
  for_batches(y, x, count, [](std::size_t, const FloatBatch& v) { return FloatBatch(0.5f) * v * two_cdf(v); });
}

void gelu_forward_with_slope(float* y, float* slope, const float* x, std::size_t count) {
  for_batches(y, x, count, [&](std::size_t i, const FloatBatch& v) {
    const FloatBatch c = two_cdf(v);
    const FloatBatch s = slope_from(v, c);
    if (i + kLanes <= count) {
      s.store_unaligned(slope + i);
    } else {  // the padded tail
      alignas(64) float buf[kLanes];
      s.store_aligned(buf);
      std::copy(buf, buf + (count - i), slope + i);
    }
    return FloatBatch(0.5f) * v * c;
  });
}

void gelu_backward(float* dx, const float* dy, const float* x, std::size_t count) {
  // dx may alias dy: each batch reads its dy before the result is stored over it.
  for_batches(dx, x, count, [&](std::size_t i, const FloatBatch& v) {
    alignas(64) float g[kLanes] = {};
    std::copy(dy + i, dy + std::min(count, i + kLanes), g);
    return FloatBatch::load_aligned(g) * slope_from(v, two_cdf(v));
  });
}

}  // namespace sharp::transformer

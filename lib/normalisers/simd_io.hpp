#pragma once
// Loads and stores of one batch of logits as doubles, for double and float rows alike: float rows
// are widened on load and narrowed on store, so every kernel computes and accumulates in double.
// The batch is xsimd's default for the build's ISA (SHARP_ISA): 4 doubles at x86-64-v3 (AVX2),
// 8 at x86-64-v4 (AVX-512), 2 below (SSE2).
#include <immintrin.h>

#include <cstddef>
#include <xsimd/xsimd.hpp>

namespace sharp::norm::simd {

using batch_d = xsimd::batch<double>;
inline constexpr std::size_t kLanes = batch_d::size;

inline batch_d load_batch(const double* x) { return batch_d::load_unaligned(x); }
inline void store_batch(double* y, batch_d v) { v.store_unaligned(y); }

#if defined(__AVX512F__)
static_assert(kLanes == 8, "xsimd's default batch under AVX-512 holds 8 doubles");
inline batch_d load_batch(const float* x) { return batch_d(_mm512_cvtps_pd(_mm256_loadu_ps(x))); }
inline void store_batch(float* y, batch_d v) { _mm256_storeu_ps(y, _mm512_cvtpd_ps(v)); }
#elif defined(__AVX__)
static_assert(kLanes == 4, "xsimd's default batch under AVX holds 4 doubles");
inline batch_d load_batch(const float* x) { return batch_d(_mm256_cvtps_pd(_mm_loadu_ps(x))); }
inline void store_batch(float* y, batch_d v) { _mm_storeu_ps(y, _mm256_cvtpd_ps(v)); }
#else
inline batch_d load_batch(const float* x) {
  alignas(64) double lane[kLanes];
  for (std::size_t i = 0; i < kLanes; ++i) lane[i] = static_cast<double>(x[i]);
  return batch_d::load_aligned(lane);
}
inline void store_batch(float* y, batch_d v) {
  alignas(64) double lane[kLanes];
  v.store_aligned(lane);
  for (std::size_t i = 0; i < kLanes; ++i) y[i] = static_cast<float>(lane[i]);
}
#endif

// The last count < kLanes entries, padded with `fill` (e.g. -inf: a masked entry, neutral everywhere).
template <class T>
inline batch_d load_partial(const T* x, std::size_t count, double fill) {
  alignas(64) double lane[kLanes];
  for (std::size_t i = 0; i < kLanes; ++i) lane[i] = i < count ? static_cast<double>(x[i]) : fill;
  return batch_d::load_aligned(lane);
}

template <class T>
inline void store_partial(T* y, std::size_t count, batch_d v) {
  alignas(64) double lane[kLanes];
  v.store_aligned(lane);
  for (std::size_t i = 0; i < count; ++i) y[i] = static_cast<T>(lane[i]);
}

inline double horizontal_max(batch_d v) {
  alignas(64) double lane[kLanes];
  v.store_aligned(lane);
  double m = lane[0];
  for (std::size_t i = 1; i < kLanes; ++i) m = m > lane[i] ? m : lane[i];
  return m;
}

}  // namespace sharp::norm::simd

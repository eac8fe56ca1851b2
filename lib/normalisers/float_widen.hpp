#pragma once
// A batch of floats widened to two batches of doubles (its low and high halves, exactly), for float
// kernels that accumulate in double: two conversions on AVX2 and AVX-512, through memory elsewhere.
#include <cstddef>

#include <xsimd/xsimd.hpp>
#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace sharp::norm::detail {

template <class A>
inline void widen(const xsimd::batch<float, A>& v, xsimd::batch<double, A>& low, xsimd::batch<double, A>& high) {
  using BD = xsimd::batch<double, A>;
#if defined(__AVX512F__)
  if constexpr (sizeof(typename BD::register_type) == 64) {
    low = BD(_mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    high = BD(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
    return;
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(typename BD::register_type) == 32) {
    low = BD(_mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    high = BD(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
    return;
  }
#endif
  constexpr std::size_t L = BD::size;
  alignas(64) float lane[2 * L];
  alignas(64) double out[2 * L];
  v.store_aligned(lane);
  for (std::size_t i = 0; i < 2 * L; ++i) out[i] = static_cast<double>(lane[i]);
  low = BD::load_aligned(out);
  high = BD::load_aligned(out + L);
}

}  // namespace sharp::norm::detail

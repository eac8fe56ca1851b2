#pragma once
// exp and exp2 on SIMD lanes of floats (xsimd batches of any ISA): the float twin of
// core/simd_exp.hpp, for kernels that compute float rows in float lanes (twice the lanes of a double
// batch). Same method, in float: for y = k + j/8 + f with k, j integers, 0 ≤ j < 8, |f| ≤ 1/16,
//   2^y = 2^k · 2^(j/8) · 2^f.
// round(8y) comes from the 1.5·2^20 shifter (float's 24-bit significand leaves round(8y) in the low
// bits of t = y + shifter); 2^k·2^(j/8) is ONE integer add of the table entry (bits of 2^(j/8) minus
// j·2^20) and t's bits shifted left by 20 (k into the exponent field, j·2^20 back). The eight entries
// sit in one register: AVX2 looks them up with one vpermps, AVX-512 with one vpermps over a table
// repeated twice (16 lanes index by their low 4 bits). 2^f = 1 + f·q(f), q the Taylor polynomial of
// degree 3 of (2^f − 1)/f (truncation 1.3e-9 = 0.02 ulp on |f| ≤ 1/16).
//
// Accuracy (tests/unit/test_simd_exp_float.cpp, against long double, every 211th float of the domain
// and breakpoints): at most 2 ulp; measured about 1 ulp (the table's entries are rounded, and so is
// the last fma). exp(x) reduces x by Cody–Waite with ln 2 split in two floats (the high part has 12
// significant bits, so k·ln2_high is exact without FMA too): its error does not grow with |x|.
//
// Domains as in the double header: *_in_range have no range handling; *_bounded flush results below
// FLT_MIN to 0 (−inf included) and keep NaN; exp/exp2 add +inf above the top. exp2_in_range is exact
// +0 at y = kExp2ZeroF (k = −127 cancels the exponent of 2^0), so a kernel clamping y there gets 0
// for masked entries without a select. Every lane is computed on its own, the same operations on
// every ISA (the register lookups are tested equal to the lane-by-lane one): the same bits at
// x86-64-v3 and -v4.
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "core/simd_fma.hpp"
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace sharp::simd {

inline constexpr float kLog2eF = 0x1.715476p0f;  // log2(e) rounded to float
inline constexpr float kLn2HighF = 0x1.62ep-1f;  // ln 2 to 12 bits: k·kLn2HighF is exact for |8k| < 2^12
inline constexpr float kLn2LowF = 0x1.0bfbe8p-15f;  // ln 2 − kLn2HighF, rounded

inline constexpr float kExp2LowestF = -126.0f;  // 2^y ≥ FLT_MIN from here; below: 0
inline constexpr float kExpLowestF = -0x1.5d589ep+6f;  // e^x ≥ FLT_MIN from here (−126·ln 2 rounded up)
inline constexpr float kExp2HighestF = 128.0f;  // 2^y overflows from here
inline constexpr float kExpHighestF = 0x1.62e42ep+6f;  // e^x overflows above (128·ln 2 rounded down)
inline constexpr float kExp2ZeroF = -127.0f;  // exp2_in_range gives exactly +0 here

namespace detail {

// Bits of 2^(j/8) (correctly rounded to float, by mpmath) minus j·2^20, j = 0..7, twice (AVX-512's
// vpermps indexes 16 entries).
alignas(64) inline constexpr std::int32_t kExp2TableBitsF[16] = {
    0x3f800000, 0x3f7b95c2, 0x3f7837f0, 0x3f75fed7, 0x3f7504f3, 0x3f75672a, 0x3f7744fd, 0x3f7ac0c7,
    0x3f800000, 0x3f7b95c2, 0x3f7837f0, 0x3f75fed7, 0x3f7504f3, 0x3f75672a, 0x3f7744fd, 0x3f7ac0c7};

inline constexpr float kShifterF = 0x1.8p20f;  // 1.5·2^23 / 8: y + kShifterF keeps round(8y) in the low bits

// 2^k·2^(j/8) from t = y + kShifterF (whose 32-bit lanes hold round(8y) = 8k + j in their low bits),
// one lane at a time (any ISA; the reference for the register versions).
template <class A>
inline xsimd::batch<float, A> table_scale_by_lane(const xsimd::batch<float, A>& t) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<std::int32_t, A>;
  alignas(64) std::int32_t lane[B::size];
  xsimd::bitwise_cast<I>(t).store_aligned(lane);
  for (std::size_t l = 0; l < B::size; ++l) {
    const auto u = static_cast<std::uint32_t>(lane[l]);
    lane[l] = static_cast<std::int32_t>(static_cast<std::uint32_t>(kExp2TableBitsF[u & 7]) + (u << 20));
  }
  return xsimd::bitwise_cast<B>(I::load_aligned(lane));
}

// The same with the table in a register where the ISA allows (same bits).
template <class A>
inline xsimd::batch<float, A> table_scale(const xsimd::batch<float, A>& t) {
  using B = xsimd::batch<float, A>;
#if defined(__AVX512F__)
  if constexpr (sizeof(typename B::register_type) == 64) {  // 16 floats: AVX-512
    const __m512i tb = _mm512_castps_si512(t);
    const __m512i entry = _mm512_permutexvar_epi32(tb, _mm512_load_si512(kExp2TableBitsF));  // low 4 bits index
    return B(_mm512_castsi512_ps(_mm512_add_epi32(entry, _mm512_slli_epi32(tb, 20))));
  } else
#endif
#if defined(__AVX2__)
      if constexpr (sizeof(typename B::register_type) == 32) {  // 8 floats: AVX2
    const __m256i tb = _mm256_castps_si256(t);
    const __m256i entry = _mm256_permutevar8x32_epi32(
        _mm256_load_si256(reinterpret_cast<const __m256i*>(kExp2TableBitsF)), tb);  // low 3 bits index
    return B(_mm256_castsi256_ps(_mm256_add_epi32(entry, _mm256_slli_epi32(tb, 20))));
  } else
#endif
  {
    return table_scale_by_lane(t);
  }
}

// 2^y from t = y + kShifterF and f = y − round(8y)/8 (|f| ≤ 1/16, a little more after a split
// reduction): scale·(1 + f·q(f)) as fma(scale·f, q, scale).
template <class A>
inline xsimd::batch<float, A> exp2_from_reduced(const xsimd::batch<float, A>& t, const xsimd::batch<float, A>& f) {
  using B = xsimd::batch<float, A>;
  B q(0x1.3b2ab6p-7f);  // ln2^4/24
  q = sharp::simd::fused_mul_add(q, f, B(0x1.c6b08ep-5f));  // ln2^3/6
  q = sharp::simd::fused_mul_add(q, f, B(0x1.ebfbe0p-3f));  // ln2^2/2
  q = sharp::simd::fused_mul_add(q, f, B(0x1.62e430p-1f));  // ln2
  const B scale = table_scale(t);
  return sharp::simd::fused_mul_add(scale * f, q, scale);
}

}  // namespace detail

// 2^y for −126 ≤ y < 127.9375 (and +0 at y = kExp2ZeroF), no range handling: garbage outside (−inf
// gives NaN), NaN gives NaN.
template <class A>
inline xsimd::batch<float, A> exp2_in_range(const xsimd::batch<float, A>& y) {
  using B = xsimd::batch<float, A>;
  const B t = y + B(detail::kShifterF);
  const B f = y - (t - B(detail::kShifterF));
  return detail::exp2_from_reduced(t, f);
}

// 2^y for y < 127.9375: 0 for y < −126 (results below FLT_MIN, and −inf); NaN stays NaN.
template <class A>
inline xsimd::batch<float, A> exp2_bounded(const xsimd::batch<float, A>& y) {
  using B = xsimd::batch<float, A>;
  return xsimd::select(y < B(kExp2LowestF), B(0.0f), exp2_in_range(y));  // NaN < c is false: NaN kept
}

// 2^y for any y: +inf from 128 on, 0 below −126, NaN stays NaN (near the top 2^y = 2^(y−1)·2).
template <class A>
inline xsimd::batch<float, A> exp2(const xsimd::batch<float, A>& y) {
  using B = xsimd::batch<float, A>;
  B v = exp2_bounded(y);
  const auto high = y >= B(127.0f);
  if (xsimd::any(high)) {
    const B half = exp2_in_range(y - B(1.0f));
    v = xsimd::select(high, half + half, v);
  }
  return xsimd::select(y >= B(kExp2HighestF), B(std::numeric_limits<float>::infinity()), v);
}

namespace detail {
// e^x·2^-offset (offset 0 or 1) by Cody–Waite: k = round(8·x·log2 e)/8 from the shifter,
// r = x − k·ln 2 in two steps (k·kLn2HighF exact), f = r·log2 e, then the table.
template <class A>
inline xsimd::batch<float, A> exp_with_offset(const xsimd::batch<float, A>& x, const xsimd::batch<float, A>& offset) {
  using B = xsimd::batch<float, A>;
  const B shifter = B(kShifterF) - offset;  // exact
  const B t = sharp::simd::fused_mul_add(x, B(kLog2eF), shifter);
  const B k = t - shifter;  // exact, a multiple of 1/8
  B r = sharp::simd::fused_neg_mul_add(k, B(kLn2HighF), x);
  r = sharp::simd::fused_neg_mul_add(k, B(kLn2LowF), r);
  return exp2_from_reduced(t, r * B(kLog2eF));
}
}  // namespace detail

// e^x for −87.33 ≤ x ≤ 88.68 (e^x ≥ FLT_MIN), no range handling.
template <class A>
inline xsimd::batch<float, A> exp_in_range(const xsimd::batch<float, A>& x) {
  using B = xsimd::batch<float, A>;
  return detail::exp_with_offset(x, B(0.0f));
}

// e^x for x ≤ 88.68: 0 below −87.34 (e^x < FLT_MIN, and −inf); NaN stays NaN.
template <class A>
inline xsimd::batch<float, A> exp_bounded(const xsimd::batch<float, A>& x) {
  using B = xsimd::batch<float, A>;
  return xsimd::select(x < B(kExpLowestF), B(0.0f), exp_in_range(x));
}

// e^x for any x: +inf above 88.72, 0 below −87.34, NaN stays NaN.
template <class A>
inline xsimd::batch<float, A> exp(const xsimd::batch<float, A>& x) {
  using B = xsimd::batch<float, A>;
  B v = exp_bounded(x);
  const auto high = x >= B(88.0f);
  if (xsimd::any(high)) {
    const B half = detail::exp_with_offset(x, B(1.0f));
    v = xsimd::select(high, half + half, v);
  }
  return xsimd::select(x > B(kExpHighestF), B(std::numeric_limits<float>::infinity()), v);
}

// The same on one value (lane 0 of a broadcast batch: identical bits to the lanes). Named with an f
// so that no call with a double argument picks them by accident.
inline float exp2f_bounded(float y) { return sharp::simd::exp2_bounded(xsimd::batch<float>(y)).get(0); }
inline float exp2f(float y) { return sharp::simd::exp2(xsimd::batch<float>(y)).get(0); }
inline float expf_bounded(float x) { return sharp::simd::exp_bounded(xsimd::batch<float>(x)).get(0); }
inline float expf(float x) { return sharp::simd::exp(xsimd::batch<float>(x)).get(0); }

}  // namespace sharp::simd

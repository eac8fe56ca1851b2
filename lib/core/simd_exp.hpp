#pragma once
// exp and exp2 on SIMD lanes of doubles (xsimd batches of any ISA) for the softmax-family and
// dispersion hot loops: the library's one vectorised exp. Why not xsimd::exp: on AVX2 it converts
// the exponent one lane at a time and handles the full domain with several blends (0.36 G exp/s per
// core here, against 2.1 G/s for exp2_in_range below; bench/normalisers.cpp exp/...).
//
// Method (table-driven, base 2): for y = k + j/8 + f with k, j integers, 0 ≤ j < 8, |f| ≤ 1/16,
//   2^y = 2^k · 2^(j/8) · 2^f.
// round(8y) comes from the 1.5·2^49 shifter (adding it leaves round(8y) in the low bits of t), so
// f = y − round(8y)/8 is exact. 2^k·2^(j/8) is ONE integer add: the table holds the bits of 2^(j/8)
// minus j·2^49, and t's bits shifted left by 49 add k to the exponent field and j·2^49 back (glibc's
// exp uses the same trick with 128 entries). Eight entries fit in registers: AVX2 looks them up with
// two vpermd (low and high 32-bit halves), AVX-512 with one vpermq; no gather (a gather costs
// ~8 cycles per batch on this Zen 5, more than the polynomial it saves). 2^f = 1 + f·q(f) with q of
// degree 6, a Chebyshev fit by mpmath of (2^f − 1)/f on [−1/16, 1/16] (relative error 6e-18), by
// Horner's scheme. Cost per batch: 8 FMA-pipe operations (the FMA pipes are the bottleneck of the
// softmax kernels) against 11–14 for a table-free degree-11 polynomial.
//
// Accuracy (tests/unit/test_simd_exp.cpp, against long double over the whole domain): at most
// 1.5 ulp; measured 0.99 ulp for exp2 and 1.08 ulp for exp at x86-64-v3 and -v4 (the table's
// entries are rounded, and so is the last fma), 1.26 and 1.20 ulp at -v2 (no FMA). exp(x) reduces
// x by Cody–Waite (see exp_with_offset), so its error does not grow with |x|. For softmax sums, prefer exp2 on logits scaled by log2(e) once (one multiply, no
// extended reduction): 2^(x·log2 e) then carries an extra relative error up to |x|·2^-53 from
// rounding the product — the same size as the rounding of the argument x itself, and irrelevant to a
// sum, where a weight's absolute error is at most |x|·e^x·2^-53 ≤ 2^-53/e of the largest term.
//
// Domains: *_in_range have no range handling (cheapest; garbage outside, NaN in gives NaN out);
// *_bounded flush small results to 0 (−inf included) and keep NaN; exp/exp2 add +inf above the top.
// Results below DBL_MIN (exp) or 2·DBL_MIN (exp2) are flushed to 0 — softmax never needs subnormal
// weights, they are below 1e-307 of the largest. Every lane is computed on its own, so a scalar call
// (lane 0 of a broadcast batch) gives the same bits as the lanes; the AVX2, AVX-512 and generic
// paths run the same operations on the same table (the lookups are tested equal), so results agree
// bit for bit between ISA levels with FMA (x86-64-v3 and -v4).
#include <cstddef>
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "core/simd_fma.hpp"
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace sharp::simd {

inline constexpr double kLog2e = 0x1.71547652b82fep0;  // log2(e) rounded to double
inline constexpr double kLn2High = 0x1.62e42fee00000p-1;  // ln 2 to 32 bits (fdlibm's split)
inline constexpr double kLn2Low = 0x1.a39ef35793c76p-33;  // ln 2 − kLn2High

// Smallest arguments that are not flushed: 2^-1021 for exp2 (the old dispersion contract) and
// e^x ≥ DBL_MIN (x ≥ −1022·ln 2) for exp.
inline constexpr double kExp2Lowest = -1021.0;
inline constexpr double kExpLowest = -708.396418532264;
inline constexpr double kExp2Highest = 1024.0;  // 2^y overflows from here
inline constexpr double kExpHighest = 709.782712893384;  // e^x overflows above (1024·ln 2)

namespace detail {

// Bits of 2^(j/8) (correctly rounded, by mpmath) minus j·2^49, j = 0..7.
alignas(64) inline constexpr std::int64_t kExp2TableBits[8] = {
    0x3ff0000000000000, 0x3fef72b83c7d517b, 0x3fef06fe0a31b715, 0x3feebfdad5362a27,
    0x3feea09e667f3bcd, 0x3feeace5422aa0db, 0x3feee89f995ad3ad, 0x3fef5818dcfba487};

// The same split into 32-bit halves for AVX2's vpermd (which permutes 32-bit elements).
template <int Half>
constexpr auto table_halves() {
  struct Halves {
    alignas(32) std::int32_t v[8];
  } h{};
  for (int j = 0; j < 8; ++j) {
    const auto bits = static_cast<std::uint64_t>(kExp2TableBits[j]);
    h.v[j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(Half == 0 ? bits : bits >> 32));
  }
  return h;
}
inline constexpr auto kExp2TableLow = table_halves<0>();
inline constexpr auto kExp2TableHigh = table_halves<1>();

inline constexpr double kShifter = 0x1.8p49;  // 1.5·2^52 / 8: y + kShifter keeps round(8y) in the low bits

// 2^k·2^(j/8) from t = y + kShifter, whose 64-bit lanes hold round(8y) = 8k + j in their low bits:
// the table entry plus t's bits shifted left by 49 (k into the exponent field, j·2^49 restored).
// This version looks up one lane at a time (any ISA; the reference for the register versions).
template <class A>
inline xsimd::batch<double, A> table_scale_by_lane(const xsimd::batch<double, A>& t) {
  using B = xsimd::batch<double, A>;
  using I = xsimd::batch<std::int64_t, A>;
  alignas(64) std::int64_t lane[B::size];
  xsimd::bitwise_cast<I>(t).store_aligned(lane);
  for (std::size_t l = 0; l < B::size; ++l) {
    const auto u = static_cast<std::uint64_t>(lane[l]);
    lane[l] = static_cast<std::int64_t>(static_cast<std::uint64_t>(kExp2TableBits[u & 7]) + (u << 49));
  }
  return xsimd::bitwise_cast<B>(I::load_aligned(lane));
}

// The same with the table in registers where the ISA allows (same bits).
template <class A>
inline xsimd::batch<double, A> table_scale(const xsimd::batch<double, A>& t) {
  using B = xsimd::batch<double, A>;
#if defined(__AVX512F__)
  if constexpr (sizeof(typename B::register_type) == 64) {  // 8 doubles: AVX-512
    const __m512i tb = _mm512_castpd_si512(t);
    const __m512i entry = _mm512_permutexvar_epi64(tb, _mm512_load_si512(kExp2TableBits));  // low 3 bits index
    return B(_mm512_castsi512_pd(_mm512_add_epi64(entry, _mm512_slli_epi64(tb, 49))));
  } else
#endif
#if defined(__AVX2__)
      if constexpr (sizeof(typename B::register_type) == 32) {  // 4 doubles: AVX2
    // vpermd picks 32-bit elements by the low 3 bits of each index element: the low half of each
    // 64-bit lane is indexed by t's low word (8k + j), the high half by the same word moved up.
    const __m256i tb = _mm256_castpd_si256(t);
    const __m256i up = _mm256_slli_epi64(tb, 32);
    const __m256i low =
        _mm256_permutevar8x32_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(kExp2TableLow.v)), tb);
    const __m256i high =
        _mm256_permutevar8x32_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(kExp2TableHigh.v)), up);
    const __m256i entry = _mm256_blend_epi32(low, high, 0b10101010);
    return B(_mm256_castsi256_pd(_mm256_add_epi64(entry, _mm256_slli_epi64(up, 17))));
  } else
#endif
  {
    return table_scale_by_lane(t);
  }
}

// Coefficients of q, highest degree first: degree 6, a Chebyshev fit by mpmath of (2^f − 1)/f on
// [−1/16, 1/16] (2^f to 6e-18 relative: the exp to 1 ulp), and degree 4 (6e-13: exp2_in_range_12_digits).
inline constexpr double kExp2Q6[] = {0x1.ffd1f6633bd3ap-17, 0x1.430deca12d584p-13, 0x1.5d87fe72ac65ep-10,
                                     0x1.3b2ab6f1f1910p-7,  0x1.c6b08d704a11fp-5,  0x1.ebfbdff82c6c5p-3,
                                     0x1.62e42fefa39efp-1};
inline constexpr double kExp2Q4[] = {0x1.5d8cfdff27139p-10, 0x1.3b310636df54bp-7, 0x1.c6b08d664afabp-5,
                                     0x1.ebfbdfdeef5e2p-3, 0x1.62e42fefa39efp-1};

// 2^y from t = y + kShifter and f = y − round(8y)/8 (|f| ≤ 1/16, or slightly more after the
// double-double correction of exp): scale·(1 + f·q(f)) as fma(scale·f, q, scale), q by Horner's scheme.
template <class A, std::size_t N = 7>
inline xsimd::batch<double, A> exp2_from_reduced(const xsimd::batch<double, A>& t, const xsimd::batch<double, A>& f,
                                                 const double (&q_coefficients)[N] = kExp2Q6) {
  using B = xsimd::batch<double, A>;
  B q(q_coefficients[0]);
  for (std::size_t i = 1; i < N; ++i) q = sharp::simd::fused_mul_add(q, f, B(q_coefficients[i]));
  const B scale = table_scale(t);
  return sharp::simd::fused_mul_add(scale * f, q, scale);
}

}  // namespace detail

// The one argument below the range at which exp2_in_range is exact: it gives +0 (k = −1023 cancels
// the exponent of the table's first entry, 2^0, and f = 0). A kernel that clamps y to
// max(y, kExp2Zero) so gets exactly 0 for masked (−inf) and far-negative entries without a select;
// y in (−1023, −1022) then gives some value in [0, 2^-1022) of no accuracy, which in a softmax is
// below 1e-307 of the largest weight.
inline constexpr double kExp2Zero = -1023.0;

// 2^y for −1022 ≤ y < 1023.9375 (and +0 at y = kExp2Zero), no range handling: garbage outside
// (−inf gives NaN), NaN gives NaN. (Above 1023.9375 the table's 2^k·2^(j/8) would need k = 1024:
// see exp2.)
template <class A, std::size_t N = 7>
inline xsimd::batch<double, A> exp2_in_range(const xsimd::batch<double, A>& y,
                                             const double (&q_coefficients)[N] = detail::kExp2Q6) {
  using B = xsimd::batch<double, A>;
  const B t = y + B(detail::kShifter);
  const B f = y - (t - B(detail::kShifter));
  return detail::exp2_from_reduced(t, f, q_coefficients);
}

// 2^y to 12 digits (relative error below 1e-12; measured 6e-13), same domain, the same +0 at
// kExp2Zero: for sums that need 12 digits, not the last bit — the entropy from which adaptive
// temperature takes the beta of float rows (normalisers/simd/softmax_block_impl.hpp), where 1 ulp costs 3 FMAs
// more and float lanes give 7 digits.
template <class A>
inline xsimd::batch<double, A> exp2_in_range_12_digits(const xsimd::batch<double, A>& y) {
  return exp2_in_range(y, detail::kExp2Q4);
}

// 2^y for y < 1023.9375: 0 for y < −1021 (results below 2·DBL_MIN, and −inf); NaN stays NaN.
template <class A>
inline xsimd::batch<double, A> exp2_bounded(const xsimd::batch<double, A>& y) {
  using B = xsimd::batch<double, A>;
  return xsimd::select(y < B(kExp2Lowest), B(0.0), exp2_in_range(y));  // NaN < c is false: NaN kept
}

// 2^y for any y: +inf from 1024 on, 0 below −1021, NaN stays NaN. Near the top 2^y = 2^(y−1)·2
// (y − 1 is exact there), on a branch that normal arguments never take.
template <class A>
inline xsimd::batch<double, A> exp2(const xsimd::batch<double, A>& y) {
  using B = xsimd::batch<double, A>;
  B v = exp2_bounded(y);
  const auto high = y >= B(1023.0);
  if (xsimd::any(high)) {
    const B half = exp2_in_range(y - B(1.0));
    v = xsimd::select(high, half + half, v);
  }
  return xsimd::select(y >= B(kExp2Highest), B(std::numeric_limits<double>::infinity()), v);
}

namespace detail {
// e^x·2^-offset (offset 0 or 1) by Cody–Waite in base 2: k = round(8·x·log2 e)/8 from the shifter
// (whose low bits then hold 8·(k − offset) for the table), r = x − k·ln 2 in two steps
// (k·kLn2High is exact: k has at most 14 significant bits and kLn2High 32), then f = r·log2(e) — the product's rounding is relative to |f| ≤ 1/16, so
// it costs below 0.05 ulp — and 2^k'·2^(j/8)·2^f from the table. Exact reduction without FMA too,
// so the error does not grow with |x| on any ISA.
template <class A>
inline xsimd::batch<double, A> exp_with_offset(const xsimd::batch<double, A>& x,
                                               const xsimd::batch<double, A>& offset) {
  using B = xsimd::batch<double, A>;
  const B shifter = B(kShifter) - offset;  // exact
  const B t = sharp::simd::fused_mul_add(x, B(kLog2e), shifter);
  const B k = t - shifter;  // exact, a multiple of 1/8
  B r = sharp::simd::fused_neg_mul_add(k, B(kLn2High), x);
  r = sharp::simd::fused_neg_mul_add(k, B(kLn2Low), r);
  return exp2_from_reduced(t, r * B(kLog2e));
}
}  // namespace detail

// e^x for −708.39 ≤ x ≤ 709.73 (e^x ≥ DBL_MIN; 709.73 = 1023.9375·ln 2), no range handling.
template <class A>
inline xsimd::batch<double, A> exp_in_range(const xsimd::batch<double, A>& x) {
  using B = xsimd::batch<double, A>;
  return detail::exp_with_offset(x, B(0.0));
}

// e^x for x ≤ 709.73: 0 below −708.39 (e^x < DBL_MIN, and −inf); NaN stays NaN.
template <class A>
inline xsimd::batch<double, A> exp_bounded(const xsimd::batch<double, A>& x) {
  using B = xsimd::batch<double, A>;
  return xsimd::select(x < B(kExpLowest), B(0.0), exp_in_range(x));
}

// e^x for any x: +inf above 709.78, 0 below −708.39, NaN stays NaN. Near the top e^x = 2^(y−1)·2,
// on a branch that normal arguments never take.
template <class A>
inline xsimd::batch<double, A> exp(const xsimd::batch<double, A>& x) {
  using B = xsimd::batch<double, A>;
  B v = exp_bounded(x);
  const auto high = x >= B(709.0);
  if (xsimd::any(high)) {
    const B half = detail::exp_with_offset(x, B(1.0));
    v = xsimd::select(high, half + half, v);
  }
  return xsimd::select(x > B(kExpHighest), B(std::numeric_limits<double>::infinity()), v);
}

// The same functions on one value (lane 0 of a broadcast batch: identical bits to the lanes).
inline double exp2_bounded(double y) { return sharp::simd::exp2_bounded(xsimd::batch<double>(y)).get(0); }
inline double exp2(double y) { return sharp::simd::exp2(xsimd::batch<double>(y)).get(0); }
inline double exp_bounded(double x) { return sharp::simd::exp_bounded(xsimd::batch<double>(x)).get(0); }
inline double exp(double x) { return sharp::simd::exp(xsimd::batch<double>(x)).get(0); }

}  // namespace sharp::simd

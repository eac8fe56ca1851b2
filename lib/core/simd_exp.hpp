#pragma once
// exp and exp2 on SIMD lanes of doubles or floats (xsimd batches of any ISA) for the softmax-family,
// dispersion and attention hot loops: the library's one vectorised exp. One method for both types;
// what differs between them (table, shifter, polynomial, range) is ExpConstants<T>, below. Why not
// xsimd::exp: on AVX2 it converts the exponent one lane at a time and handles the full domain with
// several blends (0.36 G exp/s per core here, against 2.1 G/s for exp2_in_range below;
// bench/normalisers.cpp exp/...).
//
// Method (table-driven, base 2): for y = k + j/8 + f with k, j integers, 0 ≤ j < 8, |f| ≤ 1/16,
//   2^y = 2^k · 2^(j/8) · 2^f.
// round(8y) comes from the shifter 1.5·2^(p−1)/8, p the significand's bits (adding it leaves
// round(8y) in the low bits of t), so f = y − round(8y)/8 is exact. 2^k·2^(j/8) is ONE integer add:
// the table holds the bits of 2^(j/8) minus j·2^(p−4), and t's bits shifted left by p − 4 add k to
// the exponent field and j·2^(p−4) back (glibc's exp uses the same trick with 128 entries). Eight
// entries fit in registers: doubles look them up with two vpermd on AVX2 (low and high 32-bit
// halves) and one vpermq on AVX-512, floats with one vpermps; no gather (a gather costs ~8 cycles
// per batch on this Zen 5, more than the polynomial it saves). 2^f = 1 + f·q(f) by Horner's scheme:
// for doubles q has degree 6, a Chebyshev fit by mpmath of (2^f − 1)/f on [−1/16, 1/16] (relative
// error 6e-18); for floats the Taylor polynomial of degree 3 (truncation 1.3e-9 = 0.02 ulp). Cost per
// double batch: 8 FMA-pipe operations (the FMA pipes are the bottleneck of the softmax kernels)
// against 11–14 for a table-free degree-11 polynomial.
//
// Accuracy (tests/unit/test_simd_exp.cpp and test_simd_exp_float.cpp, against long double): doubles
// at most 1.5 ulp over the whole domain, measured 0.99 ulp for exp2 and 1.08 ulp for exp at x86-64-v3
// and -v4 (the table's entries are rounded, and so is the last fma), 1.26 and 1.20 ulp at -v2 (no
// FMA); floats at most 2 ulp, measured about 1 ulp (every 211th float and the breakpoints). exp(x)
// reduces x by Cody–Waite (see exp_with_offset), so its error does not grow with |x|. For softmax
// sums, prefer exp2 on logits scaled by log2(e) once (one multiply, no extended reduction):
// 2^(x·log2 e) then carries an extra relative error up to |x|·2^-53 from rounding the product — the
// same size as the rounding of the argument x itself, and irrelevant to a sum, where a weight's
// absolute error is at most |x|·e^x·2^-53 ≤ 2^-53/e of the largest term.
//
// Domains: *_in_range have no range handling (cheapest; garbage outside, NaN in gives NaN out);
// *_bounded flush small results to 0 (−inf included) and keep NaN; exp/exp2 add +inf above the top.
// Results below the smallest normal (2·DBL_MIN for the double exp2) are flushed to 0 — softmax never
// needs subnormal weights, they are below 1e-307 (1e-38) of the largest. Every lane is computed on
// its own, so a scalar call (lane 0 of a broadcast batch) gives the same bits as the lanes; the
// AVX2, AVX-512 and generic paths run the same operations on the same table (the lookups are tested
// equal), so results agree bit for bit between ISA levels with FMA (x86-64-v3 and -v4).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "core/simd_fma.hpp"
#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace sharp::simd {

// What the method needs of its floating type T: the only place where double and float differ.
template <class T>
struct ExpConstants;

// The types ExpConstants has. Constraining the functions on it also makes an unqualified call pick
// them over xsimd's own exp and exp2, which argument-dependent lookup finds too.
template <class T>
concept ExpLaneType = std::is_same_v<T, double> || std::is_same_v<T, float>;

template <>
struct ExpConstants<double> {
  using Bits = std::int64_t;  // a lane's bits
  static constexpr int kTableShift = 49;  // p − 4: j·2^49 in the table, k into the exponent field
  static constexpr double kShifter = 0x1.8p49;  // 1.5·2^52 / 8: y + kShifter keeps round(8y) in the low bits
  // Bits of 2^(j/8) (correctly rounded, by mpmath) minus j·2^49, j = 0..7.
  alignas(64) static constexpr Bits kTable[8] = {0x3ff0000000000000, 0x3fef72b83c7d517b, 0x3fef06fe0a31b715,
                                                 0x3feebfdad5362a27, 0x3feea09e667f3bcd, 0x3feeace5422aa0db,
                                                 0x3feee89f995ad3ad, 0x3fef5818dcfba487};
  // q, highest degree first: degree 6, a Chebyshev fit of (2^f − 1)/f on [−1/16, 1/16] (2^f to 6e-18
  // relative: the exp to 1 ulp).
  static constexpr double kQ[] = {0x1.ffd1f6633bd3ap-17, 0x1.430deca12d584p-13, 0x1.5d87fe72ac65ep-10,
                                  0x1.3b2ab6f1f1910p-7,  0x1.c6b08d704a11fp-5,  0x1.ebfbdff82c6c5p-3,
                                  0x1.62e42fefa39efp-1};
  static constexpr double kLog2e = 0x1.71547652b82fep0;  // log2(e) rounded to double
  static constexpr double kLn2High = 0x1.62e42fee00000p-1;  // ln 2 to 32 bits (fdlibm's split): k·kLn2High exact
  static constexpr double kLn2Low = 0x1.a39ef35793c76p-33;  // ln 2 − kLn2High
  // Smallest arguments that are not flushed: 2^-1021 for exp2 (the old dispersion contract) and
  // e^x ≥ DBL_MIN (x ≥ −1022·ln 2) for exp.
  static constexpr double kExp2Lowest = -1021.0;
  static constexpr double kExpLowest = -708.396418532264;
  static constexpr double kExp2Highest = 1024.0;  // 2^y overflows from here
  static constexpr double kExpHighest = 709.782712893384;  // e^x overflows above (1024·ln 2)
  static constexpr double kExpNearTop = 709.0;  // from here exp takes the 2^(y−1)·2 branch
  static constexpr double kExp2Zero = -1023.0;  // exp2_in_range gives exactly +0 here (k = −1023)
};

template <>
struct ExpConstants<float> {
  using Bits = std::int32_t;
  static constexpr int kTableShift = 20;
  static constexpr float kShifter = 0x1.8p20f;  // 1.5·2^23 / 8
  // Bits of 2^(j/8) (correctly rounded to float, by mpmath) minus j·2^20, j = 0..7, twice (AVX-512's
  // vpermps indexes 16 entries).
  alignas(64) static constexpr Bits kTable[16] = {
      0x3f800000, 0x3f7b95c2, 0x3f7837f0, 0x3f75fed7, 0x3f7504f3, 0x3f75672a, 0x3f7744fd, 0x3f7ac0c7,
      0x3f800000, 0x3f7b95c2, 0x3f7837f0, 0x3f75fed7, 0x3f7504f3, 0x3f75672a, 0x3f7744fd, 0x3f7ac0c7};
  // q: ln2^4/24, ln2^3/6, ln2^2/2, ln2 (Taylor, degree 3).
  static constexpr float kQ[] = {0x1.3b2ab6p-7f, 0x1.c6b08ep-5f, 0x1.ebfbe0p-3f, 0x1.62e430p-1f};
  static constexpr float kLog2e = 0x1.715476p0f;  // log2(e) rounded to float
  static constexpr float kLn2High = 0x1.62ep-1f;  // ln 2 to 12 bits: k·kLn2High is exact for |8k| < 2^12
  static constexpr float kLn2Low = 0x1.0bfbe8p-15f;  // ln 2 − kLn2High, rounded
  static constexpr float kExp2Lowest = -126.0f;  // 2^y ≥ FLT_MIN from here; below: 0
  static constexpr float kExpLowest = -0x1.5d589ep+6f;  // e^x ≥ FLT_MIN from here (−126·ln 2 rounded up)
  static constexpr float kExp2Highest = 128.0f;  // 2^y overflows from here
  static constexpr float kExpHighest = 0x1.62e42ep+6f;  // e^x overflows above (128·ln 2 rounded down)
  static constexpr float kExpNearTop = 88.0f;
  static constexpr float kExp2Zero = -127.0f;  // exp2_in_range gives exactly +0 here (k = −127)
};

// The names the kernels use.
inline constexpr double kLog2e = ExpConstants<double>::kLog2e;
inline constexpr double kExpLowest = ExpConstants<double>::kExpLowest;
// The one argument below the range at which exp2_in_range is exact: it gives +0 (k cancels the
// exponent of the table's first entry, 2^0, and f = 0). A kernel that clamps y to max(y, kExp2Zero)
// so gets exactly 0 for masked (−inf) and far-negative entries without a select; y between it and
// the lowest exponent then gives some value below the smallest normal of no accuracy, which in a
// softmax is below 1e-307 (1e-38) of the largest weight.
inline constexpr double kExp2Zero = ExpConstants<double>::kExp2Zero;
inline constexpr float kExp2ZeroF = ExpConstants<float>::kExp2Zero;

namespace detail {

// The double table split into 32-bit halves for AVX2's vpermd (which permutes 32-bit elements).
template <int Half>
constexpr auto table_halves() {
  struct Halves {
    alignas(32) std::int32_t v[8];
  } h{};
  for (int j = 0; j < 8; ++j) {
    const auto bits = static_cast<std::uint64_t>(ExpConstants<double>::kTable[j]);
    h.v[j] = static_cast<std::int32_t>(static_cast<std::uint32_t>(Half == 0 ? bits : bits >> 32));
  }
  return h;
}
inline constexpr auto kExp2TableLow = table_halves<0>();
inline constexpr auto kExp2TableHigh = table_halves<1>();

// 2^k·2^(j/8) from t = y + kShifter, whose lanes hold round(8y) = 8k + j in their low bits: the
// table entry plus t's bits shifted left by kTableShift (k into the exponent field, j restored).
// This version looks up one lane at a time (any ISA; the reference for the register versions).
template <class T, class A>
inline xsimd::batch<T, A> table_scale_by_lane(const xsimd::batch<T, A>& t) {
  using C = ExpConstants<T>;
  using B = xsimd::batch<T, A>;
  using I = xsimd::batch<typename C::Bits, A>;
  using U = std::make_unsigned_t<typename C::Bits>;
  alignas(64) typename C::Bits lane[B::size];
  xsimd::bitwise_cast<I>(t).store_aligned(lane);
  for (std::size_t l = 0; l < B::size; ++l) {
    const auto u = static_cast<U>(lane[l]);
    lane[l] = static_cast<typename C::Bits>(static_cast<U>(static_cast<U>(C::kTable[u & 7]) + (u << C::kTableShift)));
  }
  return xsimd::bitwise_cast<B>(I::load_aligned(lane));
}

// The same with the table in registers where the ISA allows (same bits).
template <class T, class A>
inline xsimd::batch<T, A> table_scale(const xsimd::batch<T, A>& t) {
  using B = xsimd::batch<T, A>;
  [[maybe_unused]] constexpr auto table = ExpConstants<T>::kTable;
  [[maybe_unused]] constexpr bool is_double = std::is_same_v<T, double>;
  [[maybe_unused]] constexpr int kShift = ExpConstants<T>::kTableShift;
#if defined(__AVX512F__)
  if constexpr (sizeof(typename B::register_type) == 64) {  // AVX-512: one permute, by the low 3 (4) bits
    if constexpr (is_double) {
      const __m512i tb = _mm512_castpd_si512(t);
      const __m512i entry = _mm512_permutexvar_epi64(tb, _mm512_load_si512(table));
      return B(_mm512_castsi512_pd(_mm512_add_epi64(entry, _mm512_slli_epi64(tb, kShift))));
    } else {
      const __m512i tb = _mm512_castps_si512(t);
      const __m512i entry = _mm512_permutexvar_epi32(tb, _mm512_load_si512(table));
      return B(_mm512_castsi512_ps(_mm512_add_epi32(entry, _mm512_slli_epi32(tb, kShift))));
    }
  } else
#endif
#if defined(__AVX2__)
      if constexpr (sizeof(typename B::register_type) == 32) {
    if constexpr (is_double) {
      // vpermd picks 32-bit elements by the low 3 bits of each index element: the low half of each
      // 64-bit lane is indexed by t's low word (8k + j), the high half by the same word moved up.
      const __m256i tb = _mm256_castpd_si256(t);
      const __m256i up = _mm256_slli_epi64(tb, 32);
      const __m256i low =
          _mm256_permutevar8x32_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(kExp2TableLow.v)), tb);
      const __m256i high =
          _mm256_permutevar8x32_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(kExp2TableHigh.v)), up);
      const __m256i entry = _mm256_blend_epi32(low, high, 0b10101010);
      return B(_mm256_castsi256_pd(_mm256_add_epi64(entry, _mm256_slli_epi64(up, kShift - 32))));
    } else {
      const __m256i tb = _mm256_castps_si256(t);
      const __m256i entry = _mm256_permutevar8x32_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(table)), tb);
      return B(_mm256_castsi256_ps(_mm256_add_epi32(entry, _mm256_slli_epi32(tb, kShift))));
    }
  } else
#endif
  {
    return table_scale_by_lane(t);
  }
}

// 2^y from t = y + kShifter and f = y − round(8y)/8 (|f| ≤ 1/16, or slightly more after the
// Cody–Waite reduction of exp): scale·(1 + f·q(f)) as fma(scale·f, q, scale), q by Horner's scheme
// (coefficients highest degree first; ExpConstants<T>::kQ unless a caller trades digits for speed).
template <class T, class A, std::size_t N>
inline xsimd::batch<T, A> exp2_from_reduced(const xsimd::batch<T, A>& t, const xsimd::batch<T, A>& f,
                                            const T (&q_coefficients)[N]) {
  using B = xsimd::batch<T, A>;
  B q(q_coefficients[0]);
  for (std::size_t i = 1; i < N; ++i) q = sharp::simd::fused_mul_add(q, f, B(q_coefficients[i]));
  const B scale = table_scale(t);
  return sharp::simd::fused_mul_add(scale * f, q, scale);
}
template <class T, class A>
inline xsimd::batch<T, A> exp2_from_reduced(const xsimd::batch<T, A>& t, const xsimd::batch<T, A>& f) {
  return exp2_from_reduced(t, f, ExpConstants<T>::kQ);
}

// Degree 4 for doubles (6e-13 relative): exp2_in_range_12_digits.
inline constexpr double kExp2Q4[] = {0x1.5d8cfdff27139p-10, 0x1.3b310636df54bp-7, 0x1.c6b08d664afabp-5,
                                     0x1.ebfbdfdeef5e2p-3, 0x1.62e42fefa39efp-1};

}  // namespace detail

// 2^y from the lowest exponent (−1022, −126) up to 1023.9375 (127.9375), and +0 at kExp2Zero, no
// range handling: garbage outside (−inf gives NaN), NaN gives NaN. (Above, the table's 2^k·2^(j/8)
// would need k past the top exponent: see exp2.)
template <class T, class A, std::size_t N>
inline xsimd::batch<T, A> exp2_in_range(const xsimd::batch<T, A>& y, const T (&q_coefficients)[N]) {
  using B = xsimd::batch<T, A>;
  const B shifter(ExpConstants<T>::kShifter);
  const B t = y + shifter;
  const B f = y - (t - shifter);
  return detail::exp2_from_reduced(t, f, q_coefficients);
}
template <class T, class A>
inline xsimd::batch<T, A> exp2_in_range(const xsimd::batch<T, A>& y) {
  return exp2_in_range(y, ExpConstants<T>::kQ);
}

// 2^y to 12 digits (relative error below 1e-12; measured 6e-13), same domain, the same +0 at
// kExp2Zero: for sums that need 12 digits, not the last bit — the entropy from which adaptive
// temperature takes the beta of float rows (normalisers/simd/softmax_block_impl.hpp), where 1 ulp
// costs 3 FMAs more and float lanes give 7 digits.
template <class A>
inline xsimd::batch<double, A> exp2_in_range_12_digits(const xsimd::batch<double, A>& y) {
  return exp2_in_range(y, detail::kExp2Q4);
}

// 2^y below the top: 0 below kExp2Lowest (results below the smallest normal, and −inf); NaN stays NaN.
template <class T, class A>
inline xsimd::batch<T, A> exp2_bounded(const xsimd::batch<T, A>& y) {
  using B = xsimd::batch<T, A>;
  return xsimd::select(y < B(ExpConstants<T>::kExp2Lowest), B(T(0)), exp2_in_range(y));  // NaN < c: false, NaN kept
}

// 2^y for any y: +inf from kExp2Highest on, 0 below kExp2Lowest, NaN stays NaN. Near the top
// 2^y = 2^(y−1)·2 (y − 1 is exact there), on a branch that normal arguments never take.
template <ExpLaneType T, class A>
inline xsimd::batch<T, A> exp2(const xsimd::batch<T, A>& y) {
  using C = ExpConstants<T>;
  using B = xsimd::batch<T, A>;
  B v = exp2_bounded(y);
  const auto high = y >= B(C::kExp2Highest - T(1));
  if (xsimd::any(high)) {
    const B half = exp2_in_range(y - B(T(1)));
    v = xsimd::select(high, half + half, v);
  }
  return xsimd::select(y >= B(C::kExp2Highest), B(std::numeric_limits<T>::infinity()), v);
}

namespace detail {
// e^x·2^-offset (offset 0 or 1) by Cody–Waite in base 2: k = round(8·x·log2 e)/8 from the shifter
// (whose low bits then hold 8·(k − offset) for the table), r = x − k·ln 2 in two steps (k·kLn2High
// is exact: k has few significant bits and kLn2High leaves room for them), then f = r·log2(e) — the
// product's rounding is relative to |f| ≤ 1/16, so it costs below 0.05 ulp — and 2^k'·2^(j/8)·2^f
// from the table. Exact reduction without FMA too, so the error does not grow with |x| on any ISA.
template <class T, class A>
inline xsimd::batch<T, A> exp_with_offset(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& offset) {
  using C = ExpConstants<T>;
  using B = xsimd::batch<T, A>;
  const B shifter = B(C::kShifter) - offset;  // exact
  const B t = sharp::simd::fused_mul_add(x, B(C::kLog2e), shifter);
  const B k = t - shifter;  // exact, a multiple of 1/8
  B r = sharp::simd::fused_neg_mul_add(k, B(C::kLn2High), x);
  r = sharp::simd::fused_neg_mul_add(k, B(C::kLn2Low), r);
  return exp2_from_reduced(t, r * B(C::kLog2e));
}
}  // namespace detail

// e^x for kExpLowest ≤ x ≤ 709.73 (88.68) (e^x at least the smallest normal), no range handling.
template <class T, class A>
inline xsimd::batch<T, A> exp_in_range(const xsimd::batch<T, A>& x) {
  using B = xsimd::batch<T, A>;
  return detail::exp_with_offset(x, B(T(0)));
}

// e^x below the top: 0 below kExpLowest (below the smallest normal, and −inf); NaN stays NaN.
template <class T, class A>
inline xsimd::batch<T, A> exp_bounded(const xsimd::batch<T, A>& x) {
  using B = xsimd::batch<T, A>;
  return xsimd::select(x < B(ExpConstants<T>::kExpLowest), B(T(0)), exp_in_range(x));
}

// e^x for any x: +inf above kExpHighest, 0 below kExpLowest, NaN stays NaN. Near the top
// e^x = 2^(y−1)·2, on a branch that normal arguments never take.
template <ExpLaneType T, class A>
inline xsimd::batch<T, A> exp(const xsimd::batch<T, A>& x) {
  using C = ExpConstants<T>;
  using B = xsimd::batch<T, A>;
  B v = exp_bounded(x);
  const auto high = x >= B(C::kExpNearTop);
  if (xsimd::any(high)) {
    const B half = detail::exp_with_offset(x, B(T(1)));
    v = xsimd::select(high, half + half, v);
  }
  return xsimd::select(x > B(C::kExpHighest), B(std::numeric_limits<T>::infinity()), v);
}

// The same functions on one value (lane 0 of a broadcast batch: identical bits to the lanes). The
// float ones are named with an f so that no call with a double argument picks them by accident.
inline double exp2_bounded(double y) { return sharp::simd::exp2_bounded(xsimd::batch<double>(y)).get(0); }
inline double exp2(double y) { return sharp::simd::exp2(xsimd::batch<double>(y)).get(0); }
inline double exp_bounded(double x) { return sharp::simd::exp_bounded(xsimd::batch<double>(x)).get(0); }
inline double exp(double x) { return sharp::simd::exp(xsimd::batch<double>(x)).get(0); }
inline float exp2f_bounded(float y) { return sharp::simd::exp2_bounded(xsimd::batch<float>(y)).get(0); }
inline float exp2f(float y) { return sharp::simd::exp2(xsimd::batch<float>(y)).get(0); }
inline float expf_bounded(float x) { return sharp::simd::exp_bounded(xsimd::batch<float>(x)).get(0); }
inline float expf(float x) { return sharp::simd::exp(xsimd::batch<float>(x)).get(0); }

}  // namespace sharp::simd

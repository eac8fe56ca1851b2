#pragma once
// exp on SIMD lanes of doubles, for the softmax sums. Why not xsimd::exp: on AVX2 it converts the
// exponent to int64 one lane at a time and divides once per call (0.41 G/s per core measured here,
// bench/dispersion.cpp BM_XsimdExp); this version uses only FMAs and integer adds (about 2.5x faster).
// Method: k = round(x/ln 2) by the 1.5·2^52 shifter, r = x − k·ln 2 in two steps (|r| ≤ ln2/2),
// e^r = 1 + r + r²·q(r) with q of degree 9 (a Chebyshev fit by mpmath of (e^r − 1 − r)/r²,
// error < 2e-17 relative), evaluated by Estrin's scheme (shorter dependency chains than Horner's,
// 15% faster here), then 2^k added to the exponent field.
// Accuracy: relative error < 2.5e-16 (about 1 ulp; tested against long double). Range: x below
// −1022·ln 2 (where e^x < DBL_MIN) gives 0 — softmax never needs subnormal weights, they are 1e-308
// of the largest — and so does NaN.
// 2^y (simd_exp2_*) shares the polynomial; its reduction is exact (see there), same accuracy.
// Every lane is computed independently, so a scalar call through a 1-value batch gives the same bits.
#include <cstdint>
#include <limits>

#include <xsimd/xsimd.hpp>

namespace sharp::stats {

// e^r for |r| ≤ ln(2)/2 + a little, with t holding k in its low bits (t = 1.5·2^52 + k): 2^k·e^r.
// q(r) = c0 + c1·r + ... + c9·r^9 ≈ (e^r − 1 − r)/r², c_j near 1/(j+2)!, by Estrin's scheme.
template <class A>
inline xsimd::batch<double, A> scaled_exp_of_reduced(const xsimd::batch<double, A>& r, const xsimd::batch<double, A>& t) {
  using B = xsimd::batch<double, A>;
  using I = xsimd::batch<std::int64_t, A>;
  const B r2 = r * r;
  const B r4 = r2 * r2;
  const B c01 = xsimd::fma(B(0x1.5555555555556p-3), r, B(0x1.0000000000001p-1));
  const B c23 = xsimd::fma(B(0x1.11111111109b5p-7), r, B(0x1.5555555553d68p-5));
  const B c45 = xsimd::fma(B(0x1.a01a01a7c2efep-13), r, B(0x1.6c16c17889ef1p-10));
  const B c67 = xsimd::fma(B(0x1.71de0db2f6b19p-19), r, B(0x1.a019b9149a41cp-16));
  const B c89 = xsimd::fma(B(0x1.af389ecfc4b9cp-26), r, B(0x1.28917c89a43a7p-22));
  const B c03 = xsimd::fma(c23, r2, c01);
  const B c47 = xsimd::fma(c67, r2, c45);
  const B c49 = xsimd::fma(c89, r4, c47);
  const B q = xsimd::fma(c49, r4, c03);
  const B p = xsimd::fma(r2, q, r) + B(1.0);  // e^r ∈ [0.70, 1.42]
  // 2^k: the low bits of t hold k in two's complement; shifted into the exponent field.
  const I scale = xsimd::bitwise_cast<I>(t) << 52;
  return xsimd::bitwise_cast<B>(xsimd::bitwise_cast<I>(p) + scale);
}

// e^x for −1022·ln 2 < x ≤ 1024·ln 2 (−708.39 ≤ x ≤ 709.78) with no range handling: outside it the
// result is garbage (the exponent field wraps). For callers that know their range; it saves the
// compare and AND of simd_exp_bounded (same bits inside the range).
template <class A>
inline xsimd::batch<double, A> simd_exp_in_range(const xsimd::batch<double, A>& x) {
  using B = xsimd::batch<double, A>;
  const B shifter(0x1.8p52);
  const B t = xsimd::fma(x, B(0x1.71547652b82fep0), shifter);  // 1.5·2^52 + round(x/ln 2)
  const B k = t - shifter;
  // Cody–Waite: ln2_hi has 32 significant bits, so k·ln2_hi is exact even where xsimd::fnma is
  // not fused (no FMA below x86-64-v3); ln2_hi + ln2_lo = ln 2 to 2^-86 (fdlibm's constants).
  B r = xsimd::fnma(k, B(0x1.62e42fee00000p-1), x);
  r = xsimd::fnma(k, B(0x1.a39ef35793c76p-33), r);
  return scaled_exp_of_reduced(r, t);
}

// 2^y for −1021 ≤ y ≤ 1023 with no range handling (garbage outside). Why base 2: k = round(y) and
// f = y − k are exact (no Cody–Waite step), so the argument reduction is three adds and one
// multiply, r = f·ln 2, with a shorter dependency chain than e^x's. Same polynomial; relative error
// < 2e-16 (under 1 ulp; tested against long double).
template <class A>
inline xsimd::batch<double, A> simd_exp2_in_range(const xsimd::batch<double, A>& y) {
  using B = xsimd::batch<double, A>;
  const B shifter(0x1.8p52);
  const B t = y + shifter;  // 1.5·2^52 + round(y)
  const B f = y - (t - shifter);
  return scaled_exp_of_reduced(f * B(0x1.62e42fefa39efp-1), t);
}

// 2^y for y ≤ 1023: 0 below −1021 (where 2^y is near or below DBL_MIN) and for NaN.
template <class A>
inline xsimd::batch<double, A> simd_exp2_bounded(const xsimd::batch<double, A>& y) {
  using B = xsimd::batch<double, A>;
  return xsimd::select(y >= B(-1021.0), simd_exp2_in_range(y), B(0.0));
}

// The same on one value (lane 0 of a broadcast batch: identical bits to the lanes).
inline double simd_exp2_bounded(double y) { return simd_exp2_bounded(xsimd::batch<double>(y)).get(0); }

// e^x for x ≤ 1024·ln 2 ≈ 709.78 (larger x gives garbage: for softmax, x = z − max z ≤ 0).
template <class A>
inline xsimd::batch<double, A> simd_exp_bounded(const xsimd::batch<double, A>& x) {
  using B = xsimd::batch<double, A>;
  const B y = simd_exp_in_range(x);
  // Keep lanes with x ≥ −1022·ln 2 (the constant is just above it); the others (and NaN) become 0.
  // (On AVX2 a compare and an AND: GCC turns xsimd::select with a zero into three instructions.)
#if defined(__AVX2__) && !defined(__AVX512F__)
  if constexpr (sizeof(typename B::register_type) == sizeof(__m256d)) {
    return _mm256_and_pd(y, _mm256_cmp_pd(x, _mm256_set1_pd(-708.396418532264), _CMP_GE_OQ));
  }
#endif
  return xsimd::select(x >= B(-708.396418532264), y, B(0.0));
}

// e^x for any x: +inf above 1024·ln 2, 0 below −1022·ln 2 and for NaN.
template <class A>
inline xsimd::batch<double, A> simd_exp(const xsimd::batch<double, A>& x) {
  using B = xsimd::batch<double, A>;
  return xsimd::select(x > B(709.782712893384), B(std::numeric_limits<double>::infinity()), simd_exp_bounded(x));
}

// The same function on one value (lane 0 of a broadcast batch: identical bits to the lanes).
inline double simd_exp(double x) { return simd_exp(xsimd::batch<double>(x)).get(0); }

}  // namespace sharp::stats

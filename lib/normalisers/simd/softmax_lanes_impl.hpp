#pragma once
// The lane-group kernels of normalisers/simd/softmax_lanes.hpp (8 float rows or 4 double rows per group
// in ymm registers), for softmax_lanes_avx2.cpp (x86-64-v3) and softmax_lanes_avx512.cpp (x86-64-v4),
// chosen at start-up like the block kernels (core/simd_isa.hpp). Both builds are the same source:
// 256-bit intrinsics and xsimd's AVX2 batches, explicit fmas, -ffp-contract=off (CMakeLists.txt);
// x86-64-v4 only gives the compiler 32 vector registers instead of 16, so a 16-entry row's 16
// columns and the kernel's constants stay in registers (no spills). Same operations per lane, so
// the same bits (tests/unit/test_softmax_lanes_isa.cpp).
//
// Internal linkage (unnamed namespace) and float_group, double_group flattened (every helper they
// call inlined): the x86-64-v4 object defines only isa_avx512::float_lane_groups and
// double_lane_groups, and, weak, the trivial destructor of sharp::NumericError (no vector code;
// OnlineSoftmax::entropy throws it), so no AVX-512 instruction can be linked into the AVX2 path.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "core/online_softmax.hpp"
#include "core/simd_exp.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/simd/softmax_lanes.hpp"

namespace sharp::norm::lane_kernels {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// group(zg, pg, stride) for the groups [first, last) of `rows` rows of n entries: group g holds rows
// g G .. g G + G − 1 (G rows per group; row i at zg + i·stride), a last, partial group copied into a local one whose
// spare lanes repeat row rows − 1 (and its real rows copied back). bad[g − first] = 1 where it
// returns false.
template <std::size_t G, class T, class Group>
void for_groups(const T* z, T* p, std::size_t rows, std::size_t n, std::size_t first, std::size_t last,
                unsigned char* bad, Group&& group) {
  for (std::size_t g = first; g < last; ++g) {
    if (g * G + G <= rows) {
      bad[g - first] = group(z + g * G * n, p + g * G * n, n) ? 0 : 1;
      continue;
    }
    alignas(64) T zb[G * kLaneRowLongest], pb[G * kLaneRowLongest];
    const std::size_t count = rows - g * G;
    for (std::size_t i = 0; i < G; ++i) std::copy_n(z + (g * G + std::min(i, count - 1)) * n, n, zb + i * n);
    bad[g - first] = group(zb, pb, n) ? 0 : 1;
    std::copy_n(pb, count * n, p + g * G * n);
  }
}

// 4x4 transposes within each 128-bit half: in[i] half h lane k -> out[k] half h lane i.
inline void transpose_halves(const __m256 in[4], __m256 out[4]) {
  const __m256 t0 = _mm256_unpacklo_ps(in[0], in[1]);  // a0 b0 a1 b1 (each half)
  const __m256 t1 = _mm256_unpackhi_ps(in[0], in[1]);  // a2 b2 a3 b3
  const __m256 t2 = _mm256_unpacklo_ps(in[2], in[3]);  // c0 d0 c1 d1
  const __m256 t3 = _mm256_unpackhi_ps(in[2], in[3]);  // c2 d2 c3 d3
  out[0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));  // a0 b0 c0 d0
  out[1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));  // a1 b1 c1 d1
  out[2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  out[3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

// 8 floats of each of 8 rows (row i at rows(i), a pointer) -> 8 columns (lane i = row i). Rows i
// and i + 4 share a register (low and high half) from the loads, so only the 4x4 transposes of the
// halves remain: 16 shuffles.
template <class Rows>
inline void load_columns(const Rows& rows, __m256 col[8]) {
  __m256 a[4], b[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const float* r = rows(i);
    const float* s = rows(i + 4);
    a[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(r)), _mm_loadu_ps(s), 1);
    b[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(r + 4)), _mm_loadu_ps(s + 4), 1);
  }
  transpose_halves(a, col);  // columns 0..3
  transpose_halves(b, col + 4);  // columns 4..7
}

// The inverse: 8 columns -> 8 floats of each of 8 rows (row i at rows(i)).
template <class Rows>
inline void store_columns(const __m256 col[8], const Rows& rows) {
  __m256 a[4], b[4];
  transpose_halves(col, a);
  transpose_halves(col + 4, b);
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    float* r = rows(i);
    float* s = rows(i + 4);
    _mm_storeu_ps(r, _mm256_castps256_ps128(a[i]));
    _mm_storeu_ps(s, _mm256_extractf128_ps(a[i], 1));
    _mm_storeu_ps(r + 4, _mm256_castps256_ps128(b[i]));
    _mm_storeu_ps(s + 4, _mm256_extractf128_ps(b[i], 1));
  }
}

using BF = xsimd::batch<float, xsimd::fma3<xsimd::avx2>>;
constexpr float kInfF = std::numeric_limits<float>::infinity();

// Lanes 0..3 and 4..7 of a float batch as doubles, and back.
inline __m256d low_half(__m256 v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
inline __m256d high_half(__m256 v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
inline __m256 narrow(__m256d lo, __m256d hi) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}

// Each lane's scale beta log2 e as a float pair hi + lo (to 2^-48), and 1/hi.
struct FloatScales {
  __m256 hi, lo, inverse;
};

// From one scale for every lane, or from 8; false (nothing to compute in float lanes) unless every
// scale lies in [2^-100, 2^100] (NaN included).
bool float_scales(double scale, FloatScales& out) {
  if (!(scale >= 0x1p-100 && scale <= 0x1p100)) return false;
  const float hi = static_cast<float>(scale);
  out.hi = _mm256_set1_ps(hi);
  out.lo = _mm256_set1_ps(static_cast<float>(scale - static_cast<double>(hi)));
  out.inverse = _mm256_set1_ps(1.0f / hi);
  return true;
}
bool float_scales(__m256d lo, __m256d hi, FloatScales& out) {
  const __m256d low_limit = _mm256_set1_pd(0x1p-100), high_limit = _mm256_set1_pd(0x1p100);
  const __m256d ok =
      _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(lo, low_limit, _CMP_GE_OQ), _mm256_cmp_pd(lo, high_limit, _CMP_LE_OQ)),
                    _mm256_and_pd(_mm256_cmp_pd(hi, low_limit, _CMP_GE_OQ), _mm256_cmp_pd(hi, high_limit, _CMP_LE_OQ)));
  if (_mm256_movemask_pd(ok) != 0xf) return false;
  out.hi = narrow(lo, hi);
  out.lo = narrow(_mm256_sub_pd(lo, low_half(out.hi)), _mm256_sub_pd(hi, high_half(out.hi)));
  out.inverse = _mm256_div_ps(_mm256_set1_ps(1.0f), out.hi);
  return true;
}

using BD = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;

// Adaptive temperature's beta (docs/science.md#adaptive-temperature) of 4 rows from the sums of
// their terms 2^y at beta = 1 (y = (z − max) log2 e): H = ln s − ln 2·t/s, then
// beta = max(beta_poly(H), 1) where H > 0.5, else 1 (adaptive_temperature.hpp, on lanes).
inline BD adaptive_beta_lanes(BD sum, BD weighted) {
  const BD h = xsimd::log(sum) - BD(0.693147180559945309417) * weighted / sum;
  const BD poly = (((BD(-0.037) * h + BD(0.481)) * h - BD(2.3)) * h + BD(4.917)) * h - BD(1.791);
  return xsimd::select(h > BD(0.5), xsimd::max(poly, BD(1.0)), BD(1.0));
}

// Each of the 8 rows' adaptive scale beta log2 e, from its columns (floats, lane = row) and max, in
// double lanes: the entropy needs ~1e-10 (a beta error moves every weight by δβ·|z − mean|
// relative), which float terms (1e-7) do not give; the exp to 12 digits does
// (exp2_in_range_12_digits). False if a row is bad (NaN or +inf: NaN sums; all masked: max -inf).
template <std::size_t kColumns>
bool adaptive_scales(const __m256* col, __m256 row_max, FloatScales& out) {
  const BD lowest(sharp::simd::kExp2Zero), log2e(sharp::simd::kLog2e), neg_inf(kNegInf);
  BD s[2], t[2];
  for (int h = 0; h < 2; ++h) {  // rows 0..3, then 4..7: few live registers
    const BD m(h == 0 ? low_half(row_max) : high_half(row_max));
    BD sum(0.0), weighted(0.0);
#pragma GCC unroll 4
    for (std::size_t j = 0; j < kColumns; ++j) {
      // max(lowest, ·) returns its second operand on NaN; -inf (masked) gives lowest: a term of +0.
      const BD y = xsimd::max(lowest, (BD(h == 0 ? low_half(col[j]) : high_half(col[j])) - m) * log2e);
      const BD e = sharp::simd::exp2_in_range_12_digits(y);
      sum += e;
      weighted = sharp::simd::fused_mul_add(y, e, weighted);
    }
    if (xsimd::any(xsimd::isnan(sum) || xsimd::isnan(weighted) || m == neg_inf)) return false;
    s[h] = sum;
    t[h] = weighted;
  }
  const BD beta[2] = {adaptive_beta_lanes(s[0], t[0]), adaptive_beta_lanes(s[1], t[1])};  // two chains at once
  return float_scales(beta[0] * log2e, beta[1] * log2e, out);
}

// 8 rows of n floats, n in (8(C − 1), 8C], in float lanes, row i at scale lane i = beta_i log2 e (see
// the header; with kAdaptive, each row's adaptive beta, `fixed` unused), row i at z + i·stride and
// p + i·stride: p_i = softmax(beta_i z_i). False if a row is bad or beyond the float lanes'
// reference range. C is a template parameter so that every loop has a fixed count (unrolled; the
// sums stay in registers). The columns past n (the last chunk's padding, -inf) weigh exactly 0.
template <std::size_t C, bool kAdaptive>
__attribute__((flatten)) bool float_group(const float* z, float* p, std::size_t stride, std::size_t n,
                                          const FloatScales& fixed) {
  constexpr std::size_t L = kFloatLaneRows, kColumns = C * L;
  const std::size_t tail = n - (C - 1) * L;  // entries of the last chunk, 1..8
  alignas(32) float pad[L][L];  // the last chunk of every row when partial, padded with -inf
  alignas(32) __m256 col[kColumns];
  __m256 mx[4];
  for (auto& m : mx) m = _mm256_set1_ps(-kInfF);
#pragma GCC unroll 8
  for (std::size_t c = 0; c < C; ++c) {
    if (c + 1 == C && tail != L) {
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t l = 0; l < L; ++l) pad[i][l] = l < tail ? z[i * stride + c * L + l] : -kInfF;
      load_columns([&](int i) { return &pad[i][0]; }, col + c * L);
    } else {
      load_columns([&](int i) { return z + i * stride + c * L; }, col + c * L);
    }
    for (std::size_t k = 0; k < L; k += 2)
      mx[k / 2] = _mm256_max_ps(mx[k / 2], _mm256_max_ps(col[c * L + k], col[c * L + k + 1]));
  }
  // 4 running maxima (short dependency chains), combined: exact, whatever the order.
  const __m256 row_max = _mm256_max_ps(_mm256_max_ps(mx[0], mx[1]), _mm256_max_ps(mx[2], mx[3]));
  // Each row's reference c: u = its max·s_hi in float (|error| ≤ 2^-6 below 2^17), rounded down to a
  // multiple of 1/8, less 1/8: c ≤ max·scale − 3/32, so the max's term is 2^d, d ∈ [3/32, 1/2), and
  // the sum is ≥ 1 (a term below FLT_MIN gives a weight below FLT_MIN). The 2^d of every term
  // cancels in the normalisation. An all-masked row (max -inf), +inf, a NaN max, or |u| ≥ 2^17
  // fails the range test.
  FloatScales scale = fixed;  // adaptive: each row's own, from its entropy at beta = 1
  if constexpr (kAdaptive) {
    if (!adaptive_scales<kColumns>(col, row_max, scale)) return false;
  }
  const BF s_hi(scale.hi), s_lo(scale.lo);
  const BF u = BF(row_max) * s_hi;
  if (_mm256_movemask_ps(_mm256_cmp_ps(xsimd::abs(u), BF(0x1p17f), _CMP_LT_OQ)) != 0xff) return false;
  const BF c = xsimd::fms(xsimd::floor(u * BF(8.0f)), BF(0.125f), BF(0.125f));  // exact
  const BF shifter(sharp::simd::ExpConstants<float>::kShifter);
  const BF sc = shifter - c;  // exact: c a multiple of 1/8 below 2^17
  // Entries are clamped up to z_low = (c − 127)/s_hi (rounded twice: z_low·s_hi is within 2^-6 of
  // c − 127), where t rounds to exactly shifter − 127: k = −127, j = 0, and the table gives exactly
  // +0. So masked entries, and all below 2^-127 of the reference, weigh exactly 0; those in
  // [2^-127, 2^-126) get a value below FLT_MIN (k = −127 leaves the exponent field 0).
  const BF z_low = (c + BF(sharp::simd::kExp2ZeroF)) * BF(scale.inverse);
  // 2^(z·scale − c): t = fma(z, s_hi, shifter − c) holds round(8(z s_hi − c)) in its low bits,
  // m = t − (shifter − c) exactly, f = z s_lo + (z s_hi − m) (one rounding each). max(z_low, x)
  // returns its second operand on NaN: a NaN logit makes the sums NaN.
  auto term = [&](__m256 x) {
    const BF zc(_mm256_max_ps(z_low, x));
    const BF t = sharp::simd::fused_mul_add(zc, s_hi, sc);
    const BF m = t - sc;
    const BF f = sharp::simd::fused_mul_add(zc, s_lo, sharp::simd::fused_mul_sub(zc, s_hi, m));
    return static_cast<__m256>(sharp::simd::detail::exp2_from_reduced(t, f));
  };
  // Sums: pairs of columns (j, j + 1) in float (one rounding, 2^-24 relative), widened to double,
  // into two accumulators (pairs 0, 2, 4, .. and 1, 3, 5, ..: short dependency chains), added last.
  __m256d acc[2][2];
  for (auto& a : acc) a[0] = a[1] = _mm256_setzero_pd();
#pragma GCC unroll 32
  for (std::size_t j = 0; j < kColumns; j += 2) {
    col[j] = term(col[j]);
    col[j + 1] = term(col[j + 1]);
    const __m256 pair = _mm256_add_ps(col[j], col[j + 1]);
    __m256d* a = acc[(j / 2) % 2];
    a[0] = _mm256_add_pd(a[0], low_half(pair));
    a[1] = _mm256_add_pd(a[1], high_half(pair));
  }
  const __m256d sum_lo = _mm256_add_pd(acc[0][0], acc[1][0]), sum_hi = _mm256_add_pd(acc[0][1], acc[1][1]);
  if (_mm256_movemask_pd(
          _mm256_or_pd(_mm256_cmp_pd(sum_lo, sum_lo, _CMP_UNORD_Q), _mm256_cmp_pd(sum_hi, sum_hi, _CMP_UNORD_Q)))) {
    return false;
  }
  const __m256d one = _mm256_set1_pd(1.0);
  // 1/sum as a float pair, so that p = term·(1/sum) rounds once: fma(term, inv_hi, term·inv_lo).
  const __m256d inv_lo_d = _mm256_div_pd(one, sum_lo), inv_hi_d = _mm256_div_pd(one, sum_hi);
  const __m256 inv = narrow(inv_lo_d, inv_hi_d);
  const __m256 inv_rest = narrow(_mm256_sub_pd(inv_lo_d, low_half(inv)), _mm256_sub_pd(inv_hi_d, high_half(inv)));
#pragma GCC unroll 8
  for (std::size_t c = 0; c < C; ++c) {
    __m256 out[L];
    for (std::size_t k = 0; k < L; ++k)
      out[k] = _mm256_fmadd_ps(col[c * L + k], inv, _mm256_mul_ps(col[c * L + k], inv_rest));
    if (c + 1 == C && tail != L) {
      store_columns(out, [&](int i) { return &pad[i][0]; });
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t l = 0; l < tail; ++l) p[i * stride + c * L + l] = pad[i][l];
    } else {
      store_columns(out, [&](int i) { return p + i * stride + c * L; });
    }
  }
  return true;
}

// The float groups of rows of n entries, n in (8(C − 1), 8C].
template <std::size_t C>
void float_groups(const float* z, float* p, std::size_t rows, std::size_t n, std::size_t first, std::size_t last,
                  double beta, bool adaptive, unsigned char* bad) {
  FloatScales fixed{};
  if (!adaptive && !float_scales(beta * sharp::simd::kLog2e, fixed)) {
    std::fill(bad, bad + (last - first), 1);
    return;
  }
  for_groups<kFloatLaneRows>(z, p, rows, n, first, last, bad, [&](const float* zg, float* pg, std::size_t stride) {
    return adaptive ? float_group<C, true>(zg, pg, stride, n, fixed) : float_group<C, false>(zg, pg, stride, n, fixed);
  });
}

// Rows of n floats, 0 < n <= kLaneRowLongest: see softmax_lane_groups.
inline void float_lane_groups(const float* z, float* p, std::size_t rows, std::size_t n, std::size_t first,
                              std::size_t last, double beta, bool adaptive, unsigned char* bad) {
  switch ((n + kFloatLaneRows - 1) / kFloatLaneRows) {
    case 1: return float_groups<1>(z, p, rows, n, first, last, beta, adaptive, bad);
    case 2: return float_groups<2>(z, p, rows, n, first, last, beta, adaptive, bad);
    case 3: return float_groups<3>(z, p, rows, n, first, last, beta, adaptive, bad);
    case 4: return float_groups<4>(z, p, rows, n, first, last, beta, adaptive, bad);
    case 5: return float_groups<5>(z, p, rows, n, first, last, beta, adaptive, bad);
    case 6: return float_groups<6>(z, p, rows, n, first, last, beta, adaptive, bad);
    case 7: return float_groups<7>(z, p, rows, n, first, last, beta, adaptive, bad);
    default: return float_groups<8>(z, p, rows, n, first, last, beta, adaptive, bad);
  }
}

// --- Double lanes: 4 rows per group in ymm registers -----------------------------------------------

using BD4 = xsimd::batch<double, xsimd::fma3<xsimd::avx2>>;
// 4 double lanes in both builds (kLaneRows, the baseline's xsimd batch; xsimd's default batch in the
// x86-64-v4 build would hold 8).
constexpr std::size_t kDoubleLanes = 4;

inline BD4 load4(const double* x) { return BD4::load_unaligned(x); }
inline BD4 load4(const float* x) { return BD4(_mm256_cvtps_pd(_mm_loadu_ps(x))); }
inline void store4(double* y, BD4 v) { v.store_unaligned(y); }
inline void store4(float* y, BD4 v) { _mm_storeu_ps(y, _mm256_cvtpd_ps(v)); }
// The last count < 4 entries, padded with `fill`, and back.
template <class T>
inline BD4 load_partial4(const T* x, std::size_t count, double fill) {
  alignas(32) double lane[4];
  for (std::size_t i = 0; i < 4; ++i) lane[i] = i < count ? static_cast<double>(x[i]) : fill;
  return BD4::load_aligned(lane);
}
template <class T>
inline void store_partial4(T* y, std::size_t count, BD4 v) {
  alignas(32) double lane[4];
  v.store_aligned(lane);
  for (std::size_t i = 0; i < count; ++i) y[i] = static_cast<T>(lane[i]);
}

// 4x4 doubles in place (rows[i] lane j <-> rows[j] lane i).
inline void transpose4(BD4 rows[]) {
  const __m256d t0 = _mm256_unpacklo_pd(rows[0], rows[1]);  // r0[0] r1[0] r0[2] r1[2]
  const __m256d t1 = _mm256_unpackhi_pd(rows[0], rows[1]);  // r0[1] r1[1] r0[3] r1[3]
  const __m256d t2 = _mm256_unpacklo_pd(rows[2], rows[3]);
  const __m256d t3 = _mm256_unpackhi_pd(rows[2], rows[3]);
  rows[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  rows[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  rows[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  rows[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

// The terms 2^y, y = max(kExp2Zero, (x - max) beta log2 e), of every column (lane = row), and their
// sums (the weighted one with kWeighted): the same operations per lane as narrow_row in
// softmax_kernels.cpp, summed in column order. kColumns: the column count when fixed (loops
// unrolled), else 0 and `columns`.
template <std::size_t kColumns, bool kWeighted>
void lane_terms(const BD4* col, BD4* e, std::size_t columns, BD4 max, BD4 scale, BD4& sum, BD4& weighted) {
  const BD4 lowest(sharp::simd::kExp2Zero);
  BD4 s(0.0), t(0.0);
  const std::size_t count = kColumns ? kColumns : columns;
#pragma GCC unroll 16
  for (std::size_t j = 0; j < count; ++j) {
    const BD4 y = xsimd::max(lowest, (col[j] - max) * scale);
    e[j] = sharp::simd::exp2_in_range(y);
    s += e[j];
    if constexpr (kWeighted) t = xsimd::fma(y, e[j], t);
  }
  sum = s;
  weighted = t;
}

// kDoubleLanes rows in double lanes (float rows widened), row i at z + i·stride and p + i·stride:
// p_i = softmax(beta z_i), or with kAdaptive at each row's adaptive beta. False if a row is bad.
// kColumns: n rounded up to whole chunks of kDoubleLanes columns when fixed (every loop unrolled), else 0.
template <class T, std::size_t kColumns, bool kAdaptive>
__attribute__((flatten)) bool double_group(const T* z, T* p, std::size_t stride, std::size_t n, double beta) {
  constexpr std::size_t L = 4;
  if (n > kLaneRowLongest) return false;
  const std::size_t columns = kColumns ? kColumns : (n + L - 1) / L * L;  // padded with -inf: weight exactly 0
  alignas(64) BD4 col[kLaneRowLongest + L], e[kLaneRowLongest + L];
  BD4 max(kNegInf);
#pragma GCC unroll 16
  for (std::size_t j0 = 0; j0 < columns; j0 += L) {
    for (std::size_t i = 0; i < L; ++i) {
      const T* row = z + i * stride + j0;
      col[j0 + i] = j0 + L <= n ? load4(row) : load_partial4(row, n - j0, kNegInf);
    }
    transpose4(col + j0);
    for (std::size_t i = 0; i < L; ++i) max = xsimd::max(max, col[j0 + i]);
  }
  // A NaN or +inf logit, or an all-masked row (-inf - -inf), makes its lane's sums NaN.
  BD4 sum, weighted;
  lane_terms<kColumns, kAdaptive>(col, e, columns, max, BD4(beta * sharp::simd::kLog2e), sum, weighted);
  if (xsimd::any(xsimd::isnan(sum) || xsimd::isnan(weighted) || max == BD4(kNegInf))) return false;
  if constexpr (kAdaptive) {
    alignas(64) double m[L], s[L], t[L], b[L];
    max.store_aligned(m);
    sum.store_aligned(s);
    weighted.store_aligned(t);
    bool any_sharper = false;
    for (std::size_t i = 0; i < L; ++i) {
      // Lane i's row at beta = 1: sums of 2^y, y = (z - max) log2 e, i.e. base 2 with scale log2 e.
      const OnlineSoftmax<ExpBase::Two> at_one{.shift = m[i], .max = m[i], .sum = s[i], .weighted = t[i]};
      b[i] = adaptive_beta(at_one.entropy());
      any_sharper = any_sharper || b[i] != 1.0;
    }
    // Rows whose beta is 1 get the same terms again (same scale, same operations).
    if (any_sharper) {
      lane_terms<kColumns, false>(col, e, columns, max, BD4::load_aligned(b) * BD4(sharp::simd::kLog2e), sum, weighted);
    }
  }
  const BD4 inv = BD4(1.0) / sum;
#pragma GCC unroll 16
  for (std::size_t j0 = 0; j0 < columns; j0 += L) {
    for (std::size_t i = 0; i < L; ++i) e[j0 + i] *= inv;
    transpose4(e + j0);
    for (std::size_t i = 0; i < L; ++i) {
      if (j0 + L <= n) {
        store4(p + i * stride + j0, e[j0 + i]);
      } else {
        store_partial4(p + i * stride + j0, n - j0, e[j0 + i]);
      }
    }
  }
  return true;
}

// Rows of n doubles, 0 < n <= kLaneRowLongest, in groups of 4: see softmax_lane_groups.
inline void double_lane_groups(const double* z, double* p, std::size_t rows, std::size_t n, std::size_t first,
                               std::size_t last, double beta, bool adaptive, unsigned char* bad) {
  using T = double;
  // Rows of up to 16 entries (the common short rows) with every loop unrolled; longer ones not.
  auto run = [&]<std::size_t kColumns, bool kAdaptive>() {
    for_groups<kDoubleLanes>(z, p, rows, n, first, last, bad, [&](const T* zg, T* pg, std::size_t stride) {
      return double_group<T, kColumns, kAdaptive>(zg, pg, stride, n, beta);
    });
  };
  auto run_n = [&]<bool kAdaptive>() {
    switch ((n + kDoubleLanes - 1) / kDoubleLanes) {
      case 1: return run.template operator()<kDoubleLanes, kAdaptive>();
      case 2: return run.template operator()<2 * kDoubleLanes, kAdaptive>();
      case 3: return run.template operator()<3 * kDoubleLanes, kAdaptive>();
      case 4: return run.template operator()<4 * kDoubleLanes, kAdaptive>();
      default: return run.template operator()<0, kAdaptive>();
    }
  };
  if (adaptive) {
    run_n.template operator()<true>();
  } else {
    run_n.template operator()<false>();
  }
}

}  // namespace
}  // namespace sharp::norm::lane_kernels

#define SHARP_DEFINE_SOFTMAX_LANES(NAMESPACE)                                                             \
  namespace sharp::norm::NAMESPACE {                                                                      \
  void float_lane_groups(const float* z, float* p, std::size_t rows, std::size_t n, std::size_t first,    \
                         std::size_t last, double beta, bool adaptive, unsigned char* bad) {              \
    lane_kernels::float_lane_groups(z, p, rows, n, first, last, beta, adaptive, bad);                     \
  }                                                                                                       \
  void double_lane_groups(const double* z, double* p, std::size_t rows, std::size_t n, std::size_t first, \
                          std::size_t last, double beta, bool adaptive, unsigned char* bad) {             \
    lane_kernels::double_lane_groups(z, p, rows, n, first, last, beta, adaptive, bad);                    \
  }                                                                                                       \
  }

#include "normalisers/softmax_lanes.hpp"

#include <immintrin.h>

#include <cmath>
#include <limits>

#include "core/online_softmax.hpp"
#include "core/simd_exp.hpp"
#include "core/simd_exp_float.hpp"
#include "normalisers/adaptive_temperature.hpp"

namespace sharp::norm {
namespace detail {

void transpose_lanes_by_lane(simd::batch_d rows[]) {
  constexpr std::size_t L = kLaneRows;
  alignas(64) double m[L][L];
  for (std::size_t i = 0; i < L; ++i) rows[i].store_aligned(m[i]);
  alignas(64) double col[L];
  for (std::size_t j = 0; j < L; ++j) {
    for (std::size_t i = 0; i < L; ++i) col[i] = m[i][j];
    rows[j] = simd::batch_d::load_aligned(col);
  }
}

void transpose_lanes(simd::batch_d rows[]) {
#if defined(__AVX__) && !defined(__AVX512F__)
  const __m256d t0 = _mm256_unpacklo_pd(rows[0], rows[1]);   // r0[0] r1[0] r0[2] r1[2]
  const __m256d t1 = _mm256_unpackhi_pd(rows[0], rows[1]);   // r0[1] r1[1] r0[3] r1[3]
  const __m256d t2 = _mm256_unpacklo_pd(rows[2], rows[3]);
  const __m256d t3 = _mm256_unpackhi_pd(rows[2], rows[3]);
  rows[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  rows[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  rows[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  rows[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
#else
  transpose_lanes_by_lane(rows);
#endif
}

void float_rows_to_columns_by_lane(const float* const rows[], float columns[][kFloatLaneRows]) {
  for (std::size_t j = 0; j < kFloatLaneRows; ++j)
    for (std::size_t i = 0; i < kFloatLaneRows; ++i) columns[j][i] = rows[i][j];
}

void float_columns_to_rows_by_lane(const float columns[][kFloatLaneRows], float* const rows[]) {
  for (std::size_t i = 0; i < kFloatLaneRows; ++i)
    for (std::size_t j = 0; j < kFloatLaneRows; ++j) rows[i][j] = columns[j][i];
}

}  // namespace detail

namespace {

using simd::batch_d;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// --- Double lanes ---------------------------------------------------------------------------------

// The terms 2^y, y = max(kExp2Zero, (x - max) beta log2 e), of every column (lane = row), and their
// sums: the same operations per lane as narrow_row in softmax_kernels.cpp, summed in column order.
void lane_terms(const batch_d* col, batch_d* e, std::size_t columns, batch_d max, batch_d scale,
                batch_d& sum, batch_d& weighted) {
  const batch_d lowest(sharp::simd::kExp2Zero);
  batch_d s(0.0), t(0.0);
  for (std::size_t j = 0; j < columns; ++j) {
    const batch_d y = xsimd::max(lowest, (col[j] - max) * scale);
    e[j] = sharp::simd::exp2_in_range(y);
    s += e[j];
    t = xsimd::fma(y, e[j], t);
  }
  sum = s;
  weighted = t;
}

// kLaneRows rows in double lanes (float rows widened): p[i] = softmax(beta z[i]), or with `adaptive`
// at each row's adaptive beta. With p null (adaptive only), nothing is written: betas[i] gets row
// i's beta. False if a row is bad.
template <class T>
bool double_group(const T* const z[], T* const p[], std::size_t n, double beta, bool adaptive, double* betas) {
  constexpr std::size_t L = kLaneRows;
  const std::size_t columns = (n + L - 1) / L * L;   // padded with -inf: weight exactly 0
  alignas(64) batch_d col[kLaneRowLongest + L], e[kLaneRowLongest + L];
  batch_d max(kNegInf);
  for (std::size_t j0 = 0; j0 < columns; j0 += L) {
    for (std::size_t i = 0; i < L; ++i) {
      col[j0 + i] = j0 + L <= n ? simd::load_batch(z[i] + j0) : simd::load_partial(z[i] + j0, n - j0, kNegInf);
    }
    detail::transpose_lanes(col + j0);
    for (std::size_t i = 0; i < L; ++i) max = xsimd::max(max, col[j0 + i]);
  }
  // A NaN or +inf logit, or an all-masked row (-inf - -inf), makes its lane's sums NaN.
  batch_d sum, weighted;
  lane_terms(col, e, columns, max, batch_d(beta * sharp::simd::kLog2e), sum, weighted);
  if (xsimd::any(xsimd::isnan(sum) || xsimd::isnan(weighted) || max == batch_d(kNegInf))) return false;
  if (adaptive) {
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
      if (betas) betas[i] = b[i];
    }
    if (!p) return true;
    // Rows whose beta is 1 get the same terms again (same scale, same operations).
    if (any_sharper) {
      lane_terms(col, e, columns, max, batch_d::load_aligned(b) * batch_d(sharp::simd::kLog2e), sum, weighted);
    }
  }
  const batch_d inv = batch_d(1.0) / sum;
  for (std::size_t j0 = 0; j0 < columns; j0 += L) {
    for (std::size_t i = 0; i < L; ++i) e[j0 + i] *= inv;
    detail::transpose_lanes(e + j0);
    for (std::size_t i = 0; i < L; ++i) {
      if (j0 + L <= n) {
        simd::store_batch(p[i] + j0, e[j0 + i]);
      } else {
        simd::store_partial(p[i] + j0, n - j0, e[j0 + i]);
      }
    }
  }
  return true;
}

}  // namespace

#if defined(__AVX2__) && defined(__FMA__)
namespace detail {
namespace {

// 4x4 transposes within each 128-bit half: in[i] half h lane k -> out[k] half h lane i.
inline void transpose_halves(const __m256 in[4], __m256 out[4]) {
  const __m256 t0 = _mm256_unpacklo_ps(in[0], in[1]);   // a0 b0 a1 b1 (each half)
  const __m256 t1 = _mm256_unpackhi_ps(in[0], in[1]);   // a2 b2 a3 b3
  const __m256 t2 = _mm256_unpacklo_ps(in[2], in[3]);   // c0 d0 c1 d1
  const __m256 t3 = _mm256_unpackhi_ps(in[2], in[3]);   // c2 d2 c3 d3
  out[0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));   // a0 b0 c0 d0
  out[1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));   // a1 b1 c1 d1
  out[2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  out[3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
}

// 8 floats of each of 8 rows -> 8 columns (lane i = row i). Rows i and i + 4 share a register (low
// and high half) from the loads, so only the 4x4 transposes of the halves remain: 16 shuffles.
inline void load_columns(const float* const rows[], __m256 col[8]) {
  __m256 a[4], b[4];
  for (int i = 0; i < 4; ++i) {
    a[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(rows[i])), _mm_loadu_ps(rows[i + 4]), 1);
    b[i] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(rows[i] + 4)), _mm_loadu_ps(rows[i + 4] + 4), 1);
  }
  transpose_halves(a, col);       // columns 0..3
  transpose_halves(b, col + 4);   // columns 4..7
}

// The inverse: 8 columns -> 8 floats of each of 8 rows.
inline void store_columns(const __m256 col[8], float* const rows[]) {
  __m256 a[4], b[4];
  transpose_halves(col, a);
  transpose_halves(col + 4, b);
  for (int i = 0; i < 4; ++i) {
    _mm_storeu_ps(rows[i], _mm256_castps256_ps128(a[i]));
    _mm_storeu_ps(rows[i + 4], _mm256_extractf128_ps(a[i], 1));
    _mm_storeu_ps(rows[i] + 4, _mm256_castps256_ps128(b[i]));
    _mm_storeu_ps(rows[i + 4] + 4, _mm256_extractf128_ps(b[i], 1));
  }
}

}  // namespace

void float_rows_to_columns(const float* const rows[], float columns[][kFloatLaneRows]) {
  __m256 col[8];
  load_columns(rows, col);
  for (std::size_t j = 0; j < 8; ++j) _mm256_storeu_ps(columns[j], col[j]);
}

void float_columns_to_rows(const float columns[][kFloatLaneRows], float* const rows[]) {
  __m256 col[8];
  for (std::size_t j = 0; j < 8; ++j) col[j] = _mm256_loadu_ps(columns[j]);
  store_columns(col, rows);
}

}  // namespace detail

namespace {

using BF = xsimd::batch<float, xsimd::fma3<xsimd::avx2>>;
constexpr float kInfF = std::numeric_limits<float>::infinity();

// Lanes 0..3 and 4..7 of a float batch as doubles, and back.
inline __m256d low_half(__m256 v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
inline __m256d high_half(__m256 v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
inline __m256 narrow(__m256d lo, __m256d hi) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}

// 8 rows of n <= 64 floats in float lanes, row i at scale[i] = beta_i log2 e (see the header):
// p[i] = softmax(beta_i z[i]). False if a row is bad or beyond the float lanes' reference range.
bool float_group(const float* const z[], float* const p[], std::size_t n, const double* scale) {
  constexpr std::size_t L = kFloatLaneRows;
  const std::size_t chunks = (n + L - 1) / L, tail = n % L;   // a last chunk of `tail` entries
  alignas(32) float pad[L][L];   // the last, partial chunk of every row, padded with -inf
  const float* src[L];
  float* dst[L];
  alignas(32) __m256 col[kLaneRowLongest];
  __m256 mx = _mm256_set1_ps(-kInfF);
  for (std::size_t c = 0; c < chunks; ++c) {
    const bool partial = c + 1 == chunks && tail != 0;
    for (std::size_t i = 0; i < L; ++i) {
      if (partial) {
        for (std::size_t l = 0; l < L; ++l) pad[i][l] = l < tail ? z[i][c * L + l] : -kInfF;
        src[i] = pad[i];
      } else {
        src[i] = z[i] + c * L;
      }
    }
    detail::load_columns(src, col + c * L);
    for (std::size_t k = 0; k < L; ++k) mx = _mm256_max_ps(mx, col[c * L + k]);
  }
  // Each row's reference c = its max·scale rounded down to a multiple of 1/8 (so the max's term is
  // 2^d, d ∈ [0, 1/8), and the sum ≥ 1: a term below FLT_MIN gives a weight below FLT_MIN). An
  // all-masked row (max -inf), +inf, a NaN max, or |c| ≥ 2^18 fails the range test.
  const __m256d sc_lo = _mm256_loadu_pd(scale), sc_hi = _mm256_loadu_pd(scale + 4);
  const __m256d eighth = _mm256_set1_pd(0.125), eight = _mm256_set1_pd(8.0);
  const __m256d c_lo = _mm256_mul_pd(_mm256_floor_pd(_mm256_mul_pd(_mm256_mul_pd(low_half(mx), sc_lo), eight)), eighth);
  const __m256d c_hi = _mm256_mul_pd(_mm256_floor_pd(_mm256_mul_pd(_mm256_mul_pd(high_half(mx), sc_hi), eight)), eighth);
  // Entries clamped up to z_low ((c − 200)/scale: y ≈ −200) weigh exactly 0, masked ones included.
  const __m256d two_hundred = _mm256_set1_pd(200.0);
  const __m256d zl_lo = _mm256_div_pd(_mm256_sub_pd(c_lo, two_hundred), sc_lo);
  const __m256d zl_hi = _mm256_div_pd(_mm256_sub_pd(c_hi, two_hundred), sc_hi);
  const __m256d limit = _mm256_set1_pd(0x1p18), zero = _mm256_setzero_pd(), zl_limit = _mm256_set1_pd(0x1p120);
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  auto in_range = [&](__m256d c, __m256d s, __m256d zl) {   // false for NaN too (ordered compares)
    return _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(_mm256_and_pd(c, abs_mask), limit, _CMP_LT_OQ),
                                       _mm256_cmp_pd(s, zero, _CMP_GT_OQ)),
                         _mm256_cmp_pd(_mm256_and_pd(zl, abs_mask), zl_limit, _CMP_LT_OQ));
  };
  if (_mm256_movemask_pd(_mm256_and_pd(in_range(c_lo, sc_lo, zl_lo), in_range(c_hi, sc_hi, zl_hi))) != 0xf) return false;
  const BF shifter(sharp::simd::detail::kShifterF);
  const BF sc = shifter - BF(narrow(c_lo, c_hi));   // exact: c a multiple of 1/8 below 2^18
  const BF t_low = shifter + BF(sharp::simd::kExp2ZeroF);   // k = −127: the table gives exactly 0
  const BF z_low(narrow(zl_lo, zl_hi));
  const BF s_hi(narrow(sc_lo, sc_hi));
  const BF s_lo(narrow(_mm256_sub_pd(sc_lo, low_half(s_hi)), _mm256_sub_pd(sc_hi, high_half(s_hi))));
  // 2^(z·scale − c): t = fma(z, s_hi, shifter − c) holds round(8(z s_hi − c)) in its low bits,
  // m = t − (shifter − c) exactly, f = z s_lo + (z s_hi − m) (one rounding each). max(z_low, x) and
  // max(t_low, ·) return their second operand on NaN: a NaN logit makes the sums NaN.
  auto term = [&](__m256 x) {
    const BF zc(_mm256_max_ps(z_low, x));
    const BF t(_mm256_max_ps(t_low, sharp::simd::fused_mul_add(zc, s_hi, sc)));
    const BF m = t - sc;
    const BF f = sharp::simd::fused_mul_add(zc, s_lo, sharp::simd::fused_mul_sub(zc, s_hi, m));
    return static_cast<__m256>(sharp::simd::detail::exp2_from_reduced(t, f));
  };
  // Sums: pairs of columns (j, j + 1) in float, widened; pairs alternate between two accumulators.
  __m256d s[2][2] = {{zero, zero}, {zero, zero}};
  for (std::size_t j = 0; j < n; j += 2) {
    __m256 pair = col[j] = term(col[j]);
    if (j + 1 < n) {
      col[j + 1] = term(col[j + 1]);
      pair = _mm256_add_ps(pair, col[j + 1]);
    }
    __m256d* acc = s[(j / 2) & 1];
    acc[0] = _mm256_add_pd(acc[0], low_half(pair));
    acc[1] = _mm256_add_pd(acc[1], high_half(pair));
  }
  const __m256d sum_lo = _mm256_add_pd(s[0][0], s[1][0]), sum_hi = _mm256_add_pd(s[0][1], s[1][1]);
  if (_mm256_movemask_pd(_mm256_or_pd(_mm256_cmp_pd(sum_lo, sum_lo, _CMP_UNORD_Q), _mm256_cmp_pd(sum_hi, sum_hi, _CMP_UNORD_Q)))) {
    return false;
  }
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256 inv = narrow(_mm256_div_pd(one, sum_lo), _mm256_div_pd(one, sum_hi));
  for (std::size_t j = 0; j < n; ++j) col[j] = _mm256_mul_ps(col[j], inv);
  for (std::size_t c = 0; c < chunks; ++c) {
    const bool partial = c + 1 == chunks && tail != 0;
    for (std::size_t i = 0; i < L; ++i) dst[i] = partial ? pad[i] : p[i] + c * L;
    detail::store_columns(col + c * L, dst);
    if (partial) {
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t l = 0; l < tail; ++l) p[i][c * L + l] = pad[i][l];
    }
  }
  return true;
}

}  // namespace
#else
namespace detail {
void float_rows_to_columns(const float* const rows[], float columns[][kFloatLaneRows]) {
  float_rows_to_columns_by_lane(rows, columns);
}
void float_columns_to_rows(const float columns[][kFloatLaneRows], float* const rows[]) {
  float_columns_to_rows_by_lane(columns, rows);
}
}  // namespace detail
#endif

template <class T>
bool softmax_lane_group(const T* const z[], T* const p[], std::size_t n, double beta, bool adaptive) {
  if (n > kLaneRowLongest) return false;
  if constexpr (sizeof(T) == sizeof(double)) {
    return double_group<T>(z, p, n, beta, adaptive, nullptr);
  } else {
#if defined(__AVX2__) && defined(__FMA__)
    alignas(32) double scale[kFloatLaneRows];
    if (adaptive) {   // each row's beta from its entropy at beta = 1, in double lanes
      static_assert(kFloatLaneRows % kLaneRows == 0);
      for (std::size_t h = 0; h < kFloatLaneRows; h += kLaneRows) {
        if (!double_group<T>(z + h, nullptr, n, 1.0, true, scale + h)) return false;
      }
      for (double& s : scale) s *= sharp::simd::kLog2e;
    } else {
      for (double& s : scale) s = beta * sharp::simd::kLog2e;
    }
    return float_group(z, p, n, scale);
#else
    return false;   // no float lane kernel below AVX2 (kLaneRowMax = 0 there: forward never calls it)
#endif
  }
}

template bool softmax_lane_group<double>(const double* const[], double* const[], std::size_t, double, bool);
template bool softmax_lane_group<float>(const float* const[], float* const[], std::size_t, double, bool);

}  // namespace sharp::norm

#include "normalisers/softmax_lanes.hpp"

#include <cmath>
#include <limits>

#include "core/online_softmax.hpp"
#include "core/simd_exp.hpp"
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

}  // namespace detail

namespace {

using simd::batch_d;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

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

}  // namespace

template <class T>
bool softmax_lane_group(const T* const z[], T* const p[], std::size_t n, double beta, bool adaptive) {
  constexpr std::size_t L = kLaneRows;
  const std::size_t columns = (n + L - 1) / L * L;   // padded with -inf: weight exactly 0
  if (n > kLaneRowLongest) return false;
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
    }
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

template bool softmax_lane_group<double>(const double* const[], double* const[], std::size_t, double, bool);
template bool softmax_lane_group<float>(const float* const[], float* const[], std::size_t, double, bool);

}  // namespace sharp::norm

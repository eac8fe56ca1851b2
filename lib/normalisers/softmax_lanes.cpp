#include "normalisers/softmax_lanes.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/online_softmax.hpp"
#include "core/simd_exp.hpp"
#include "core/simd_exp_float.hpp"
#include "core/simd_isa.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/float_lane_groups.hpp"

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
// sums (the weighted one with kWeighted): the same operations per lane as narrow_row in
// softmax_kernels.cpp, summed in column order. kColumns: the column count when fixed (loops
// unrolled), else 0 and `columns`.
template <std::size_t kColumns, bool kWeighted>
void lane_terms(const batch_d* col, batch_d* e, std::size_t columns, batch_d max, batch_d scale,
                batch_d& sum, batch_d& weighted) {
  const batch_d lowest(sharp::simd::kExp2Zero);
  batch_d s(0.0), t(0.0);
  const std::size_t count = kColumns ? kColumns : columns;
#pragma GCC unroll 16
  for (std::size_t j = 0; j < count; ++j) {
    const batch_d y = xsimd::max(lowest, (col[j] - max) * scale);
    e[j] = sharp::simd::exp2_in_range(y);
    s += e[j];
    if constexpr (kWeighted) t = xsimd::fma(y, e[j], t);
  }
  sum = s;
  weighted = t;
}

// kLaneRows rows in double lanes (float rows widened), row i at z + i·stride and p + i·stride:
// p_i = softmax(beta z_i), or with kAdaptive at each row's adaptive beta. False if a row is bad.
// kColumns: n rounded up to whole chunks of kLaneRows columns when fixed (every loop unrolled), else 0.
template <class T, std::size_t kColumns, bool kAdaptive>
bool double_group(const T* z, T* p, std::size_t stride, std::size_t n, double beta) {
  constexpr std::size_t L = kLaneRows;
  if (n > kLaneRowLongest) return false;
  const std::size_t columns = kColumns ? kColumns : (n + L - 1) / L * L;   // padded with -inf: weight exactly 0
  alignas(64) batch_d col[kLaneRowLongest + L], e[kLaneRowLongest + L];
  batch_d max(kNegInf);
#pragma GCC unroll 16
  for (std::size_t j0 = 0; j0 < columns; j0 += L) {
    for (std::size_t i = 0; i < L; ++i) {
      const T* row = z + i * stride + j0;
      col[j0 + i] = j0 + L <= n ? simd::load_batch(row) : simd::load_partial(row, n - j0, kNegInf);
    }
    detail::transpose_lanes(col + j0);
    for (std::size_t i = 0; i < L; ++i) max = xsimd::max(max, col[j0 + i]);
  }
  // A NaN or +inf logit, or an all-masked row (-inf - -inf), makes its lane's sums NaN.
  batch_d sum, weighted;
  lane_terms<kColumns, kAdaptive>(col, e, columns, max, batch_d(beta * sharp::simd::kLog2e), sum, weighted);
  if (xsimd::any(xsimd::isnan(sum) || xsimd::isnan(weighted) || max == batch_d(kNegInf))) return false;
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
      lane_terms<kColumns, false>(col, e, columns, max, batch_d::load_aligned(b) * batch_d(sharp::simd::kLog2e), sum,
                                  weighted);
    }
  }
  const batch_d inv = batch_d(1.0) / sum;
#pragma GCC unroll 16
  for (std::size_t j0 = 0; j0 < columns; j0 += L) {
    for (std::size_t i = 0; i < L; ++i) e[j0 + i] *= inv;
    detail::transpose_lanes(e + j0);
    for (std::size_t i = 0; i < L; ++i) {
      if (j0 + L <= n) {
        simd::store_batch(p + i * stride + j0, e[j0 + i]);
      } else {
        simd::store_partial(p + i * stride + j0, n - j0, e[j0 + i]);
      }
    }
  }
  return true;
}

}  // namespace

namespace detail {

void float_rows_to_columns(const float* const rows[], float columns[][kFloatLaneRows]) {
  __m256 col[8];
  lane_kernels::load_columns([&](int i) { return rows[i]; }, col);
  for (std::size_t j = 0; j < 8; ++j) _mm256_storeu_ps(columns[j], col[j]);
}

void float_columns_to_rows(const float columns[][kFloatLaneRows], float* const rows[]) {
  __m256 col[8];
  for (std::size_t j = 0; j < 8; ++j) col[j] = _mm256_loadu_ps(columns[j]);
  lane_kernels::store_columns(col, [&](int i) { return rows[i]; });
}


}  // namespace detail

namespace {
using lane_kernels::for_groups;
}  // namespace

template <class T>
void softmax_lane_groups(const T* z, T* p, std::size_t rows, std::size_t n, std::size_t first, std::size_t last,
                         double beta, bool adaptive, unsigned char* bad) {
  if (n == 0 || n > kLaneRowLongest) {
    std::fill(bad, bad + (last - first), 1);
    return;
  }
  if constexpr (sizeof(T) == sizeof(double)) {
    // Rows of up to 16 entries (the common short rows) with every loop unrolled; longer ones not.
    auto run = [&]<std::size_t kColumns, bool kAdaptive>() {
      for_groups(z, p, rows, n, first, last, bad, [&](const T* zg, T* pg, std::size_t stride) {
        return double_group<T, kColumns, kAdaptive>(zg, pg, stride, n, beta);
      });
    };
    auto run_n = [&]<bool kAdaptive>() {
      switch ((n + kLaneRows - 1) / kLaneRows) {
        case 1: return run.template operator()<kLaneRows, kAdaptive>();
        case 2: return run.template operator()<2 * kLaneRows, kAdaptive>();
        case 3: return run.template operator()<3 * kLaneRows, kAdaptive>();
        case 4: return run.template operator()<4 * kLaneRows, kAdaptive>();
        default: return run.template operator()<0, kAdaptive>();
      }
    };
    if (adaptive) {
      run_n.template operator()<true>();
    } else {
      run_n.template operator()<false>();
    }
  } else {
    static const auto kernel = active_simd_isa() == SimdIsa::Avx512 ? &isa_avx512::float_lane_groups
                                                                   : &isa_avx2::float_lane_groups;
    kernel(z, p, rows, n, first, last, beta, adaptive, bad);
  }
}

template void softmax_lane_groups<double>(const double*, double*, std::size_t, std::size_t, std::size_t, std::size_t,
                                          double, bool, unsigned char*);
template void softmax_lane_groups<float>(const float*, float*, std::size_t, std::size_t, std::size_t, std::size_t,
                                         double, bool, unsigned char*);
}  // namespace sharp::norm

#include "normalisers/simd/softmax_lanes.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/online_softmax.hpp"
#include "core/simd_exp.hpp"
#include "core/simd_isa.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/simd/softmax_lanes_impl.hpp"

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
#if defined(__AVX2__) && !defined(__AVX512F__)
  // The kernels' own shuffles (softmax_lanes_impl.hpp), so the test of this function tests them.
  lane_kernels::BD4 r[kLaneRows];
  for (std::size_t i = 0; i < kLaneRows; ++i) r[i] = lane_kernels::BD4(static_cast<__m256d>(rows[i]));
  lane_kernels::transpose4(r);
  for (std::size_t i = 0; i < kLaneRows; ++i) rows[i] = simd::batch_d(static_cast<__m256d>(r[i]));
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

template <class T>
void softmax_lane_groups(const T* z, T* p, std::size_t rows, std::size_t n, std::size_t first, std::size_t last,
                         double beta, bool adaptive, unsigned char* bad) {
  if (n == 0 || n > kLaneRowLongest) {
    std::fill(bad, bad + (last - first), 1);
    return;
  }
  if constexpr (sizeof(T) == sizeof(double)) {
    static_assert(kLaneRows == lane_kernels::kDoubleLanes);
    static const auto kernel =
        active_simd_isa() == SimdIsa::Avx512 ? &isa_avx512::double_lane_groups : &isa_avx2::double_lane_groups;
    kernel(z, p, rows, n, first, last, beta, adaptive, bad);
  } else {
    static const auto kernel =
        active_simd_isa() == SimdIsa::Avx512 ? &isa_avx512::float_lane_groups : &isa_avx2::float_lane_groups;
    kernel(z, p, rows, n, first, last, beta, adaptive, bad);
  }
}

template void softmax_lane_groups<double>(const double*, double*, std::size_t, std::size_t, std::size_t, std::size_t,
                                          double, bool, unsigned char*);
template void softmax_lane_groups<float>(const float*, float*, std::size_t, std::size_t, std::size_t, std::size_t,
                                         double, bool, unsigned char*);
}  // namespace sharp::norm

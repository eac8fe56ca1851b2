#pragma once
// Softmax and adaptive temperature (docs/science.md#notation, docs/science.md#adaptive-temperature)
// of short rows, a group of rows at a time: one row per SIMD lane. A row of 16 entries costs as much
// in fixed work — its max, two horizontal sums, a division — as in exps when it is done alone; in
// lanes those reductions are plain vector operations shared by the group, and the rows move in and
// out by transposes. Each lane computes its row on its own, so a row's result does not depend on the
// rows beside it (a last, partial group repeats a row in the spare lanes).
//
// Double rows: kLaneRows = 4 double lanes (AVX2), 4x4 transposes.
// Float rows: kFloatLaneRows = 8 float lanes (AVX2), 8x8 transposes (loads into register halves
// and 16 shuffles), the float exp (core/simd_exp.hpp) with y reduced exactly as the float
// block lanes do (softmax_block_impl.hpp): each row's reference c (a multiple of 1/8 just below its
// max·beta·log2 e), the scale split into a float pair, so no float y is ever rounded; terms
// 2^(y + d), d ∈ [3/32, 1/2) the reference's offset, which the normalisation cancels. Sums of float
// pairs widened to double (one float rounding, 2^-24 relative), p = term·(1/sum) with 1/sum as a
// float pair (one rounding): worst 3 float ulp against the double kernel's result rounded to float
// over every length 1..64 (tests/unit/test_softmax_lanes.cpp; the contract is 4). Adaptive decides
// each row's beta on its entropy at beta = 1 in double lanes (a float exp's 1e-7 error in the
// entropy would move beta, and with it every weight, by ~1e-7·|z − mean|, far beyond 4 ulp): the
// same float columns widened, the exp to 12 digits, the log and beta's polynomial on lanes; then the
// weights at that beta in float lanes.
//
// Both kernels (softmax_lanes_impl.hpp) are compiled twice, at x86-64-v3 and at x86-64-v4, from the
// same 256-bit source, and chosen at start-up (core/simd_isa.hpp, SHARP_SIMD): at x86-64-v4 the
// compiler has 32 vector registers, so a 16-entry row's 16 columns no longer spill. Same operations
// per lane in both: the same bits (tests/unit/test_softmax_lanes_isa.cpp). Measured at 16384x16,
// 1 thread (docs/architecture.md#benchmarks): softmax float 0.128–0.132 ms at x86-64-v4 against
// 0.142–0.150 ms at x86-64-v3, about 38% of its limit (50% needs ~71 instructions per row); softmax
// double 0.200–0.205 ms against 0.217–0.232 ms (49–50%); the adaptive rows are bound by their
// entropy pass, not registers (float 0.38–0.40 ms; double 0.50–0.51 ms against 0.53–0.61 ms).
//
// Float rows beyond the float lanes' range (|max·beta·log2 e| ≥ 2^17, or beta log2 e outside
// [2^-100, 2^100]) mark their group bad, and go row by row (double lanes) like bad rows.
#include <cstddef>

#include "normalisers/simd_io.hpp"

namespace sharp::norm {

inline constexpr std::size_t kLaneRows = simd::kLanes;  // double rows per group
inline constexpr std::size_t kFloatLaneRows = 8;  // float rows per group (8 float lanes)
template <class T>
inline constexpr std::size_t kLaneRowsOf = sizeof(T) == sizeof(double) ? kLaneRows : kFloatLaneRows;
inline constexpr std::size_t kLaneRowLongest = 64;  // longest row softmax_lane_groups handles
// Longest row forward hands to the lane kernel: all it handles where the transposes are register
// shuffles (AVX2); 0, i.e. rows one at a time, on other ISAs, where they would go through memory.
#if defined(__AVX2__) && !defined(__AVX512F__)
inline constexpr std::size_t kLaneRowMax = kLaneRowLongest;
#else
inline constexpr std::size_t kLaneRowMax = 0;
#endif

// Rows of n entries (z and p: rows x n), in groups of G = kLaneRowsOf<T> rows: group g holds rows
// gG .. gG + G − 1 (a last, partial group repeats row rows − 1 in its spare lanes). For the groups
// [first, last): p = softmax(beta z) row by row; with `adaptive`, beta is each row's own adaptive
// beta (docs/science.md#adaptive-temperature, from the entropy at beta = 1). bad[g − first] = 1, with
// that group's p unspecified, if a row of it is bad (a NaN or +inf logit, or every entry masked),
// n > kLaneRowLongest, or (float) a row is beyond the float lanes' range: the caller then runs each
// of its rows alone (rows = 1: the row in every lane, the bits it gets in any group), then with its
// row-by-row kernel, which reports a bad row.
template <class T>
void softmax_lane_groups(const T* z, T* p, std::size_t rows, std::size_t n, std::size_t first, std::size_t last,
                         double beta, bool adaptive, unsigned char* bad);

// The kernels' two builds (softmax_lanes_avx2.cpp, softmax_lanes_avx512.cpp; the second runs only
// where the CPU has AVX-512): softmax_lane_groups<float> and <double> for 0 < n <= kLaneRowLongest.
namespace isa_avx2 {
void float_lane_groups(const float* z, float* p, std::size_t rows, std::size_t n, std::size_t first, std::size_t last,
                       double beta, bool adaptive, unsigned char* bad);
void double_lane_groups(const double* z, double* p, std::size_t rows, std::size_t n, std::size_t first,
                        std::size_t last, double beta, bool adaptive, unsigned char* bad);
}  // namespace isa_avx2
namespace isa_avx512 {
void float_lane_groups(const float* z, float* p, std::size_t rows, std::size_t n, std::size_t first, std::size_t last,
                       double beta, bool adaptive, unsigned char* bad);
void double_lane_groups(const double* z, double* p, std::size_t rows, std::size_t n, std::size_t first,
                        std::size_t last, double beta, bool adaptive, unsigned char* bad);
}  // namespace isa_avx512

namespace detail {
// Transposes kLaneRows x kLaneRows doubles in place (rows[i] lane j <-> rows[j] lane i): the double
// lane kernels' shuffles on AVX2, through memory one lane at a time elsewhere (the reference the
// shuffles are tested against).
void transpose_lanes(simd::batch_d rows[]);
void transpose_lanes_by_lane(simd::batch_d rows[]);
// The float kernel's 8x8 moves: columns[j][i] = rows[i][j] (8 floats from each of 8 row pointers,
// by shuffles on AVX2), and back (rows[i][j] = columns[j][i]); the _by_lane versions are the plain
// loops the shuffles are tested against.
void float_rows_to_columns(const float* const rows[], float columns[][kFloatLaneRows]);
void float_columns_to_rows(const float columns[][kFloatLaneRows], float* const rows[]);
void float_rows_to_columns_by_lane(const float* const rows[], float columns[][kFloatLaneRows]);
void float_columns_to_rows_by_lane(const float columns[][kFloatLaneRows], float* const rows[]);
}  // namespace detail

}  // namespace sharp::norm

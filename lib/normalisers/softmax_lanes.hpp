#pragma once
// Softmax and adaptive temperature (docs/science.md#notation, docs/science.md#adaptive-temperature) of short rows, kLaneRows rows at a time: one row
// per SIMD lane (4 at AVX2). A row of 16 entries costs as much in fixed work — its max, two
// horizontal sums, a division — as in exps when it is done alone; in lanes those reductions are
// plain vector operations shared by the group, and the rows move in and out by kLaneRows x kLaneRows
// transposes. Each lane computes its row on its own, so a row's result does not depend on the rows
// beside it (a last, partial group repeats a row in the spare lanes).
#include <cstddef>

#include "normalisers/simd_io.hpp"

namespace sharp::norm {

inline constexpr std::size_t kLaneRows = simd::kLanes;   // rows per group
inline constexpr std::size_t kLaneRowLongest = 64;       // longest row softmax_lane_group handles
// Longest row forward hands to the lane kernel: all it handles where the transposes are register
// shuffles (AVX2); 0, i.e. rows one at a time, on other ISAs, where they would go through memory.
#if defined(__AVX__) && !defined(__AVX512F__)
inline constexpr std::size_t kLaneRowMax = kLaneRowLongest;
#else
inline constexpr std::size_t kLaneRowMax = 0;
#endif

// p[i] = softmax(beta z[i]) for the kLaneRows rows z[i] of n entries each; with `adaptive`, beta is
// each row's own adaptive beta (docs/science.md#adaptive-temperature, from the entropy at beta = 1). Returns false, with p
// unspecified, if a row is bad (a NaN or +inf logit, or every entry masked) or n > kLaneRowLongest:
// the caller then runs its row-by-row kernel, which reports a bad row.
template <class T>
bool softmax_lane_group(const T* const z[], T* const p[], std::size_t n, double beta, bool adaptive);

namespace detail {
// Transposes kLaneRows x kLaneRows doubles in place (rows[i] lane j <-> rows[j] lane i): shuffles on
// AVX2, through memory one lane at a time elsewhere (the reference the shuffles are tested against).
void transpose_lanes(simd::batch_d rows[]);
void transpose_lanes_by_lane(simd::batch_d rows[]);
}  // namespace detail

}  // namespace sharp::norm

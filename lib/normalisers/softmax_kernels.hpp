#pragma once
// Vectorised softmax-family row kernels (docs/science.md#notation, docs/science.md#adaptive-temperature): the statistics of softmax(beta*z) in one pass
// and p = softmax(beta*z) itself, for double and float rows, accumulating in double. Float rows of
// more than 64 entries compute in float lanes (softmax_block_impl.hpp); their outputs stay
// within 4 float ulp of the double kernel's rounded to float (tests/unit/test_softmax_float.cpp).
// Float rows of at most 64 entries here compute in double lanes (narrow_row); Normaliser::forward
// sends batches of them to the float lane-group kernel instead (softmax_lanes.hpp).
//
// A row is cut into fixed blocks of kSoftmaxBlock entries. Each block gets its own reference point
// and the sums relative to it; blocks are merged in index order. The block partition does not depend on the
// thread count, so the result is bit-identical whether the blocks of a long row run on 1 or many
// threads (`parallel`). One pass over the row reads each logit once and computes one exp per logit:
// the exp throughput, not memory, is the limit (see bench/normalisers.cpp). Rows of at most 64
// entries are done whole, relative to their exact max (their fixed costs, not exps, dominate).
#include <cstddef>

#include "core/online_softmax.hpp"
#include "normalisers/workspace.hpp"

namespace sharp::norm {

inline constexpr std::size_t kSoftmaxBlock = 2048;  // entries per block (workspace slot 3 holds per-block results)

// The statistics of softmax(beta*z) over one row or block are an OnlineSoftmax<> with scale beta
// (core/online_softmax.hpp, docs/science.md#streaming-entropy): shift in z's units, sum =
// sum_k exp(beta (z_k - shift)), weighted = sum_k beta (z_k - shift) exp(beta (z_k - shift)),
// max = max_k z_k over unmasked entries. The shift is a reference point, not necessarily the max:
// the block kernel takes a cheap estimate of the max (so a block is read once) and redoes the block
// with the exact max if that estimate is off by more than 512/beta. Blocks merge with
// merge(later, beta); log_sum_exp(beta) = ln sum exp(beta z).

// One pass over the row, nothing stored. Throws sharp::NumericError (NaN, +inf, all masked).
template <class T>
OnlineSoftmax<> softmax_row_statistics(const T* z, std::size_t n, double beta, bool parallel, Workspace& ws);

// The same with the terms of float rows in double lanes, from an exp to 12 digits (rows of more than
// 64 entries; shorter rows take the full exp): an entropy to about 1e-11, for adaptive temperature's
// beta (float lanes give float precision, ~1e-7, which moves tail weights by tens of ulp:
// softmax_block.hpp, FloatLanes::kTwelveDigits). Double rows: softmax_row_statistics.
template <class T>
OnlineSoftmax<> softmax_row_entropy_statistics(const T* z, std::size_t n, double beta, bool parallel, Workspace& ws);

// p = softmax(beta*z) (masked entries get exactly 0) and the statistics of the row, so the entropy
// of p comes for free. Throws sharp::NumericError like softmax_row_statistics.
template <class T>
OnlineSoftmax<> softmax_row(const T* z, T* p, std::size_t n, double beta, bool parallel, Workspace& ws);

// p = softmax(beta*z) alone, for callers that do not need the statistics: float rows then skip the
// weighted sum (the entropy's), a quarter of the float kernel's work. Throws like softmax_row.
template <class T>
void softmax_weights(const T* z, T* p, std::size_t n, double beta, bool parallel, Workspace& ws);

// softmax_row in its two halves, for a caller that may discard the terms (adaptive temperature
// chooses beta from the statistics of the beta = 1 pass and keeps its terms only when beta = 1):
// softmax_terms writes unnormalised terms into p (and the block scales into workspace slot 3);
// normalise_terms, with the same n, beta and returned statistics, turns them into softmax(beta*z).
// Nothing may use workspace slot 3 in between. Float rows: double lanes, as
// softmax_row_entropy_statistics (its 12 digits, then rounded to float).
template <class T>
OnlineSoftmax<> softmax_terms(const T* z, T* p, std::size_t n, double beta, bool parallel, Workspace& ws);
template <class T>
void normalise_terms(T* p, std::size_t n, double beta, const OnlineSoftmax<>& stats, bool parallel, Workspace& ws);

}  // namespace sharp::norm

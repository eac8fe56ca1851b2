#pragma once
// Streaming softmax statistics (docs/science.md#streaming-entropy): for logits z_1..z_n seen in chunks, keep the running
// maximum m, s = Σ exp(z_j − m) and t = Σ (z_j − m)·exp(z_j − m). Then
//   log-sum-exp = m + ln s,   entropy H = ln s − t/s (nats),   softmax(z)_k = exp(z_k − m)/s,
// with O(1) memory, whatever the row length. Streams of consecutive parts of a row merge in a FIXED
// order (merge(later)), so a row cut into blocks gives the same bits for any thread count.
//
// Accuracy: every add() cuts its input into sub-chunks of kSubChunk values, sums each sub-chunk in
// 4 SIMD lane accumulators (256 terms each) and adds the sub-chunk sums into (sum, sum_comp) with
// Neumaier's compensated summation, so the error does not grow with n (2^30 and beyond) as a plain
// running sum's n·eps would. Both s and −t are sums of non-negative terms; their relative error is
// at most about 256·eps/2 ≈ 3e-14 (reached when one large weight shares a lane with many small
// ones: the one-hot row at δ/θ = 20 shows 1.8e-14), typically a few ulp.
// Bit-reproducibility: the result depends only on the sequence of values and on where add() calls
// start; cutting a row at multiples of kSubChunk gives exactly the same bits as one add() call.
//
// Each rise of the running maximum rescales the sums (one rounding each): rare for rows in random
// order; even an ascending row of 2^20 (a rise in every sub-chunk) stays within 1e-12 (tested).
//
// Logits may be −inf (a masked item: weight 0). NaN or +inf throws sharp::NumericError and leaves
// the stream as it was before the add().
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/compensated_sum.hpp"
#include "core/online_softmax.hpp"

namespace sharp::norm {

struct SoftmaxStream {
  static constexpr std::size_t kSubChunk = 1024;

  // m = softmax.shift = softmax.max (−inf while empty or all masked), s = Σ exp(z − m) and
  // t = Σ (z − m)·exp(z − m) ≤ 0, each with Neumaier's running correction.
  OnlineSoftmax<ExpBase::E, CompensatedSum> softmax;
  double min = std::numeric_limits<double>::infinity();  // smallest logit seen (for α_min)
  std::uint64_t count = 0;  // logits seen, masked ones included

  // A chunk of logits (for attention: scaled logits z = e/θ). Vectorised.
  void add(const double* z, std::size_t n);
  // Float logits, in float lanes (the float exp; sums in double over fixed partials, the same bits on
  // every ISA): float precision, max/min/count exact, sums, log-sum-exp and entropy within about
  // 1e-6 relative of the same logits widened to double. Cut at multiples of kSubChunk, the same
  // bits as one call, as for doubles.
  void add(const float* z, std::size_t n);
  // The statistics of the logits that come after this stream's (rescales both to the common max).
  void merge(const SoftmaxStream& later);

  double max() const { return softmax.max; }
  // m + ln s; −inf for an empty or fully masked stream.
  double log_sum_exp() const { return softmax.log_sum_exp(); }
  // ln s − t/s in nats; throws sharp::NumericError for an empty or fully masked stream.
  double entropy() const { return softmax.entropy(); }
  // softmax coefficient exp(z − m)/s of a logit z of this row (0 for an empty stream).
  double probability(double z) const { return softmax.weight(z); }

 private:
  void add_sub_chunk(const double* z, std::size_t n);
  void add_float_sub_chunk(const float* z, std::size_t n);
};

}  // namespace sharp::norm

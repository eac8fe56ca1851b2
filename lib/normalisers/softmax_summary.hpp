#pragma once
// One-pass softmax statistics of a row (docs/science.md#streaming-entropy): log-sum-exp, entropy and the adaptive
// beta from the running max m, s = sum exp(z - m) and t = sum (z - m) exp(z - m).
//  - A row held in memory: softmax_summary(z, n) runs the vectorised blocked kernel of the normaliser
//    family (fixed blocks merged in order; `parallel` splits the row across threads with identical
//    results).
//  - A row too long to hold (or produced chunk by chunk, e.g. the trained-head evaluation at
//    n = 2^20): feed the chunks to a SoftmaxStream (softmax_stream.hpp; mergeable across chunks and
//    threads in a fixed order) and call summarize(stream). The second pass of docs/science.md#adaptive-temperature then applies beta:
//    softmax(beta z)_k = exp(beta (z_k - m)) / sum_j exp(beta (z_j - m)), for instance by streaming the
//    scaled chunks beta*z through a second SoftmaxStream, or by accumulating an attention output's
//    numerator and denominator with the max m known from the first pass.
#include <cstddef>
#include <cstdint>

#include "normalisers/softmax_stream.hpp"

namespace sharp::norm {

struct SoftmaxSummary {
  double max;  // m, the largest logit
  double log_sum_exp;  // ln sum_k exp(z_k)
  double entropy;  // H(softmax(z)) in nats
  double adaptive_beta;  // beta(H) of docs/science.md#adaptive-temperature
  std::uint64_t count;  // logits seen (masked included)
};

// From streamed statistics (throws sharp::NumericError for an empty or fully masked stream).
SoftmaxSummary summarize(const SoftmaxStream& stream);

// From a row in memory, one pass (throws sharp::NumericError on NaN, +inf, or all masked).
SoftmaxSummary softmax_summary(const double* z, std::size_t n, bool parallel = false);
SoftmaxSummary softmax_summary(const float* z, std::size_t n, bool parallel = false);

}  // namespace sharp::norm

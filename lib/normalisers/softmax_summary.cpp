#include "normalisers/softmax_summary.hpp"

#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/softmax_kernels.hpp"

namespace sharp::norm {

SoftmaxSummary summarize(const SoftmaxStream& stream) {
  const double h = stream.entropy();  // throws when empty or fully masked
  return {stream.max(), stream.log_sum_exp(), h, adaptive_beta(h), stream.count};
}

template <class T>
static SoftmaxSummary summary_any(const T* z, std::size_t n, bool parallel) {
  thread_local Workspace ws;
  const OnlineSoftmax<> s = softmax_row_statistics(z, n, 1.0, parallel, ws);
  const double h = s.entropy();
  return {s.max, s.log_sum_exp(1.0), h, adaptive_beta(h), n};
}

SoftmaxSummary softmax_summary(const double* z, std::size_t n, bool parallel) { return summary_any(z, n, parallel); }
SoftmaxSummary softmax_summary(const float* z, std::size_t n, bool parallel) { return summary_any(z, n, parallel); }

}  // namespace sharp::norm

// The `adaptive` normaliser (docs/science.md#adaptive-temperature): H = entropy of softmax(z), then
// p = softmax(β(H)·z) with β(H) of adaptive_temperature.hpp. It is a SoftmaxFamily with
// Temperature::adaptive(), so it runs on the family's kernels everywhere; the two passes of one row,
// which only this rule needs, are here.
#include "normalisers/adaptive_temperature.hpp"

#include <memory>
#include <type_traits>

#include "normalisers/implementation.hpp"
#include "normalisers/registry.hpp"
#include "normalisers/softmax_family.hpp"
#include "normalisers/softmax_kernels.hpp"
#include "normalisers/temperature.hpp"

namespace sharp::norm {

namespace {

// The first pass computes the statistics at beta = 1 (float rows: in double lanes with an exp to 12
// digits, as the entropy must be good to ~1e-10: simd/softmax_block.hpp, FloatLanes::kTwelveDigits), the
// second softmax(beta z) (float rows: in float lanes). Double rows, and float rows longer than
// kEntropyTermsRow, store the first pass's terms and normalise them when they are the answer
// (beta = 1); shorter float rows store nothing in the first pass and take the float-lane pass at
// beta = 1 too. Measured on 1024-entry float rows: storing costs the first pass 20%, more than the
// beta = 1 rows save unless they are a quarter of all rows; long rows, whose passes cost their
// memory traffic, pass the clamp at H = 5.94 as soon as their weight spreads over 380 entries.
template <class T>
void forward(const T* z, T* p, std::size_t n, const Temperature& t, bool parallel, Workspace& ws) {
  constexpr std::size_t kEntropyTermsRow = std::size_t(1) << 16;
  if (std::is_same_v<T, float> && n <= kEntropyTermsRow) {
    const OnlineSoftmax<> at_one = softmax_row_entropy_statistics(z, n, 1.0, parallel, ws);
    softmax_weights(z, p, n, t.beta_after(at_one.entropy()), parallel, ws);
    return;
  }
  const OnlineSoftmax<> at_one = softmax_terms(z, p, n, 1.0, parallel, ws);
  const double beta = t.beta_after(at_one.entropy());
  if (beta == 1.0) {
    normalise_terms(p, n, 1.0, at_one, parallel, ws);
  } else {
    softmax_weights(z, p, n, beta, parallel, ws);
  }
}

}  // namespace

void adaptive_forward_row(const double* z, double* p, std::size_t n, const Temperature& t, bool parallel,
                          Workspace& ws) {
  forward(z, p, n, t, parallel, ws);
}
void adaptive_forward_row(const float* z, float* p, std::size_t n, const Temperature& t, bool parallel, Workspace& ws) {
  forward(z, p, n, t, parallel, ws);
}

// grad_z = beta p (v - <p,v>) + (dL/dbeta) beta'(H) dH/dz, with dL/dbeta as for softmax and
// dH/dz_j = -q_j (z_j - E_q z) for q = softmax(z) (the entropy's gradient at beta = 1).
double adaptive_backward_row(const double* z, const double* p, const double* v, double* grad_z, std::size_t n,
                             const Temperature& t, Workspace& ws) {
  double* q = ws.doubles(0, n);
  const OnlineSoftmax<> at_one = softmax_row(z, q, n, 1.0, false, ws);
  const double h = at_one.entropy();
  const double dbeta = detail::softmax_backward_row(z, p, v, grad_z, n, t.beta_after(h));
  const double slope = t.beta_after_derivative(h);
  if (slope == 0.0) return dbeta;
  const double dh = dbeta * slope;  // dL/dH
  double mean = 0.0;  // E_q (z - max z)
  for (std::size_t i = 0; i < n; ++i) {
    if (q[i] > 0.0) mean += q[i] * (z[i] - at_one.max);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (q[i] > 0.0) grad_z[i] -= dh * q[i] * ((z[i] - at_one.max) - mean);
  }
  return dbeta;
}

namespace {

// docs/science.md#adaptive-temperature
const NormaliserRegistration kAdaptive{{
    .name = "adaptive",
    .formula = "p = softmax(β(H)·z), H the entropy of softmax(z)",
    .section = "adaptive-temperature",
    .example = "adaptive",
    .make = [](const Spec& s) { return std::make_unique<SoftmaxFamily>(s, Temperature::adaptive()); },
}};

}  // namespace

}  // namespace sharp::norm

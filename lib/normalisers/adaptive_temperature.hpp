#pragma once
// Adaptive temperature (docs/science.md#adaptive-temperature, the paper's remedy), exactly:
//   beta_poly(H) = -0.037 H^4 + 0.481 H^3 - 2.3 H^2 + 4.917 H - 1.791,
//   beta(H) = max(beta_poly(H), 1) if H > 0.5, else 1,
// with H the entropy (nats, exact: no +1e-9 inside the log) of softmax(e) at beta = 1.
//
// The `adaptive` normaliser is the softmax family (softmax_family.hpp) with Temperature::adaptive():
// its registry entry and its two-pass forward and backward rows are in adaptive_temperature.cpp.
// This header is included by the ISA-specific lane kernels, so it declares them without including
// anything (no inline code of other headers may be compiled at x86-64-v4 here).
#include <cstddef>

namespace sharp::norm {

class Temperature;
class Workspace;

// p = softmax(beta_after(H) z), H the entropy of softmax(z) (docs/science.md#adaptive-temperature);
// `parallel`: a long row's blocks split across threads (same bits).
void adaptive_forward_row(const double* z, double* p, std::size_t n, const Temperature& t, bool parallel,
                          Workspace& ws);
void adaptive_forward_row(const float* z, float* p, std::size_t n, const Temperature& t, bool parallel, Workspace& ws);
// grad_z of that row for upstream v; returns dL/dbeta (for the family's parameter gradients).
double adaptive_backward_row(const double* z, const double* p, const double* v, double* grad_z, std::size_t n,
                             const Temperature& t, Workspace& ws);

inline double adaptive_beta_polynomial(double h) { return (((-0.037 * h + 0.481) * h - 2.3) * h + 4.917) * h - 1.791; }

inline double adaptive_beta_polynomial_derivative(double h) { return ((-0.148 * h + 1.443) * h - 4.6) * h + 4.917; }

// beta used for a row whose softmax at beta = 1 has entropy h.
inline double adaptive_beta(double h) {
  if (!(h > 0.5)) return 1.0;
  const double b = adaptive_beta_polynomial(h);
  return b > 1.0 ? b : 1.0;
}

// d beta / d H: 0 where the gate (H <= 0.5) or the clamp (beta_poly <= 1) is active. beta_poly < 1 on
// all of [0, 0.8486) (beta_poly(0.5) = 0.150), so the gate never changes beta and is no kink: the only
// kinks are H = 0.8486 and 5.9445, where the clamp switches, and finite differences must not sit there.
inline double adaptive_beta_derivative(double h) {
  if (!(h > 0.5) || !(adaptive_beta_polynomial(h) > 1.0)) return 0.0;
  return adaptive_beta_polynomial_derivative(h);
}

}  // namespace sharp::norm

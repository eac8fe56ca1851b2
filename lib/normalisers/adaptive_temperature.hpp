#pragma once
// Adaptive temperature (docs/science.md#adaptive-temperature, the paper's remedy), exactly:
//   beta_poly(H) = -0.037 H^4 + 0.481 H^3 - 2.3 H^2 + 4.917 H - 1.791,
//   beta(H) = max(beta_poly(H), 1) if H > 0.5, else 1,
// with H the entropy (nats, exact: no +1e-9 inside the log) of softmax(e) at beta = 1.
namespace sharp::norm {

inline double adaptive_beta_polynomial(double h) {
  return (((-0.037 * h + 0.481) * h - 2.3) * h + 4.917) * h - 1.791;
}

inline double adaptive_beta_polynomial_derivative(double h) {
  return ((-0.148 * h + 1.443) * h - 4.6) * h + 4.917;
}

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

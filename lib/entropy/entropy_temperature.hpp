#pragma once
// docs/science.md#entropy-falls-with-beta: the entropy of softmax(β·e) falls as β rises, dH/dβ = −β·Var_p(e) < 0 for non-constant e.
#include <cstddef>
#include <vector>

namespace sharp::entropy {

struct EntropyAndVariance {
  double entropy;  // H(p) in nats, p = softmax(β·e)
  double excess;  // H − ln c, c = number of maxima of e: same β-derivative as H, but held to full
      // relative precision when the row is sharp (H → ln c), so finite differences of
      // it resolve dH/dβ where differences of H itself drown in rounding
  double variance;  // Var_p(e)
};

// Computed relative to the row's maximum so that neither term cancels: with z = β·e, m = max z,
// s = Σ exp(z_j − m): H = ln s + Σ exp(z_j − m)(m − z_j)/s, and Var from d_j = e_max − e_j ≥ 0.
// Assumes β ≥ 0.
EntropyAndVariance softmax_entropy_and_variance(const double* e, std::size_t n, double beta);

struct EntropyCurve {
  std::vector<double> beta;  // [S]
  std::vector<double> entropy;  // [S]
  std::vector<double> dH_dbeta;  // [S] closed form −β·Var_p(e)
  std::vector<double> dH_dbeta_fd;  // [S] five-point central difference of H − ln c, h = 1e-4·max(1, β)
};

// The curve on the given β grid; β values are independent, shared out over `threads` (same data
// for any count).
EntropyCurve entropy_temperature_curve(const std::vector<double>& e, const std::vector<double>& betas, int threads);

}  // namespace sharp::entropy

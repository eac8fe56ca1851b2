#pragma once
// docs/science.md#weight-norm-bound, "sharpness needs large weights": for logits e_i = (Q y)ᵀ(K x_i),
//   δ = max_i e_i − min_i e_i ≤ 2·σ_max(Q)·σ_max(K)·‖y‖·max_i ‖x_i‖.
#include <cstdint>

namespace sharp::weight_bound {

struct SpreadBoundTrial {
  double delta;  // measured spread of the n logits
  double bound;  // 2 σ_max(Q) σ_max(K) ‖y‖ max‖x_i‖
};

// One random instance. Q, K [d_head, d_model] have entries N(0, weight_scale²/d_model) from the
// stream `weights_key`; y and x_1..x_n [d_model] have entries N(0, input_scale²) from `inputs_key`.
// The scales multiply fixed standard normals, so a sweep over scales reuses the same draws.
SpreadBoundTrial spread_bound_trial(std::int64_t n, std::int64_t d_model, std::int64_t d_head, double weight_scale,
                                    double input_scale, std::uint64_t weights_key, std::uint64_t inputs_key);

}  // namespace sharp::weight_bound

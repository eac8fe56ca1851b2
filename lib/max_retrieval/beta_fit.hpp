#pragma once
// SPEC §3's reconstruction of how the adaptive-temperature polynomial was fitted (reconstructed):
// for an evaluation input, the head's entropy H at β = 1 and the β* ∈ [1, β_max] that maximises
// the model's probability of the correct class when the head uses softmax(β·e); then a
// least-squares degree-4 polynomial H → β* over many inputs.
//
// β* search: p(β) is evaluated on a grid of step 0.25 over [1, β_max], then refined by
// golden-section search between the best grid point's neighbours (to |Δβ| < 1e-4). p(β) need not be
// unimodal; the grid makes the search global at its resolution. The sample's items are held in
// memory (n × width floats), so this is meant for n up to a few times 10^4.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "max_retrieval/model.hpp"

namespace sharp::max_retrieval {

struct BetaStar {
  double entropy = 0.0;     // H of the head's softmax at β = 1 (nats)
  double beta_star = 1.0;   // argmax over [1, β_max] of p_correct(β)
  double p_star = 0.0;      // p_correct(β*)
  double p_one = 0.0;       // p_correct(1)
  std::int32_t label = 0;
};

// One sample (key = set_sample_key(...)) of n items.
BetaStar best_beta(const ModelLayout& layout, const float* params, std::uint64_t sample_key, std::size_t n,
                   double beta_max);

// Least-squares polynomial of the given degree through (x, y): coefficients highest degree first
// (numpy.polyfit's order). Householder QR on the Vandermonde matrix in double. Throws
// sharp::NumericError when there are fewer points than coefficients.
std::vector<double> polyfit(const std::vector<double>& x, const std::vector<double>& y, int degree);
double polyval(const std::vector<double>& coefficients, double x);

}  // namespace sharp::max_retrieval

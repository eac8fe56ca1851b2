#pragma once
// The reconstruction of how the adaptive-temperature polynomial was fitted (docs/science.md#refitting-the-polynomial):
// for an evaluation input, the head's entropy H at β = 1 and the β* ∈ [1, β_max] that maximises
// the model's probability of the correct class when the head uses softmax(β·e); then a
// least-squares degree-4 polynomial H → β* over many inputs.
//
// β* search: p(β) is evaluated on a grid of step 0.25 over [1, β_max], then refined by
// golden-section search between the best grid point's neighbours (to |Δβ| < 1e-4). p(β) need not be
// unimodal; the grid makes the search global at its resolution. The sample's items are held in
// memory (n × width floats), so this is meant for n up to a few times 10^4.
//
// Why a second protocol (binned_beta): p(β) of a set the head already ranks right rises all the way
// to β_max (sharper is always better there), so per-set β* piles up at the bound and a polynomial
// through (H, β*) mostly fits that pile. The binned protocol asks what one β per entropy level is
// best for the sets at that level: sets are cut into equal-count bins of H, and each bin's β is the
// one maximising the bin's mean log-probability of the correct class (the log-likelihood a
// function β(H) is judged by). Both use the same grid of log p values per set.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "max_retrieval/model.hpp"

namespace sharp::max_retrieval {

struct BetaStar {
  double entropy = 0.0;  // H of the head's softmax at β = 1 (nats)
  double beta_star = 1.0;  // argmax over [1, β_max] of p_correct(β)
  double p_star = 0.0;  // p_correct(β*)
  double p_one = 0.0;  // p_correct(1)
  std::int32_t label = 0;
  std::vector<double> log_p_grid;  // ln p_correct(β) at β = 1, 1 + kBetaGridStep, …, ≤ β_max
};

inline constexpr double kBetaGridStep = 0.25;

// One sample (key = set_sample_key(...)) of n items.
BetaStar best_beta(const ModelLayout& layout, const float* params, std::uint64_t sample_key, std::size_t n,
                   double beta_max);

// ln p_correct(β) of one set from its grid, linear between grid points (β clamped to the grid).
double log_p_at(const std::vector<double>& log_p_grid, double beta);

// A bin takes the smallest grid β whose mean ln p is within this of the bin's best (nats).
inline constexpr double kBinGainTolerance = 1e-3;

// One entropy bin of the binned protocol.
struct EntropyBin {
  double entropy = 0.0;  // mean H of the bin's sets
  double beta = 1.0;  // argmax over β of the bin's mean ln p_correct (grid, refined by a parabola;
      // the smallest β within kBinGainTolerance of the best)
  double gain = 0.0;  // mean ln p_correct at that β minus at β = 1 (≥ 0)
  std::size_t count = 0;  // sets in the bin
};

// Sets ordered by entropy (ties by index) and cut into `bins` bins of equal count (the first
// sets.size() % bins bins one larger). entropy [S], log_p_grids [S][G]. Throws sharp::BadInput when
// bins < 1 or bins > S.
std::vector<EntropyBin> binned_beta(const std::vector<double>& entropy,
                                    const std::vector<std::vector<double>>& log_p_grids, std::size_t bins);

// Least-squares polynomial of the given degree through (x, y): coefficients highest degree first
// (numpy.polyfit's order). Householder QR on the Vandermonde matrix in double. Throws
// sharp::NumericError when there are fewer points than coefficients.
std::vector<double> polyfit(const std::vector<double>& x, const std::vector<double>& y, int degree);
double polyval(const std::vector<double>& coefficients, double x);

}  // namespace sharp::max_retrieval

#include "dispersion/dispersion_bounds.hpp"

#include <cmath>
#include <string>

#include "core/errors.hpp"

namespace sharp::dispersion {
namespace {

// δ/θ after checking both (the lemma needs a bounded spread and a positive temperature).
double spread_over_theta(double spread, double theta) {
  if (!(spread >= 0.0) || !std::isfinite(spread))
    throw BadInput("spread must be finite and >= 0 (got " + std::to_string(spread) + ")");
  if (!(theta > 0.0) || !std::isfinite(theta))
    throw BadInput("theta must be finite and > 0 (got " + std::to_string(theta) + ")");
  return spread / theta;
}

void check_n(std::uint64_t n) {
  if (n == 0) throw BadInput("n must be >= 1");
}

void check_epsilon(double epsilon) {
  if (!(epsilon > 0.0 && epsilon < 1.0))
    throw BadInput("epsilon must lie in (0, 1) (got " + std::to_string(epsilon) + ")");
}

}  // namespace

double bound_upper(std::uint64_t n, double spread, double theta) {
  check_n(n);
  return std::exp(spread_over_theta(spread, theta)) / static_cast<double>(n);
}

double bound_lower(std::uint64_t n, double spread, double theta) {
  check_n(n);
  return std::exp(-spread_over_theta(spread, theta)) / static_cast<double>(n);
}

double worst_case_alpha_max(std::uint64_t n, double spread, double theta) {
  check_n(n);
  return 1.0 / (1.0 + static_cast<double>(n - 1) * std::exp(-spread_over_theta(spread, theta)));
}

double smallest_n_below(double epsilon, double spread, double theta) {
  check_epsilon(epsilon);
  return 1.0 + (1.0 / epsilon - 1.0) * std::exp(spread_over_theta(spread, theta));
}

std::uint64_t smallest_integer_n_below(double epsilon, double spread, double theta) {
  const double threshold = smallest_n_below(epsilon, spread, theta);
  if (!(threshold < 18446744073709549568.0)) return UINT64_MAX;  // the largest double below 2^64
  return static_cast<std::uint64_t>(std::floor(threshold)) + 1;
}

}  // namespace sharp::dispersion

#pragma once
// Closed forms of the dispersion lemma (docs/science.md#dispersion-lemma): with every logit in [m, M], δ = M − m,
// every softmax_θ coefficient lies in [exp(−δ/θ)/n, exp(δ/θ)/n]; one logit at M and n − 1 at m is
// the tight worst case. Arguments are checked: n ≥ 1, spread ≥ 0, theta > 0, 0 < epsilon < 1
// (sharp::BadInput otherwise).
#include <cstdint>

namespace sharp::dispersion {

double bound_upper(std::uint64_t n, double spread, double theta);  // exp(δ/θ)/n
double bound_lower(std::uint64_t n, double spread, double theta);  // exp(−δ/θ)/n
double worst_case_alpha_max(std::uint64_t n, double spread, double theta);  // 1/(1 + (n−1)·exp(−δ/θ))
// The real threshold 1 + (1/ε − 1)·exp(δ/θ): the worst case has α_max < ε exactly when n exceeds it.
double smallest_n_below(double epsilon, double spread, double theta);
// The smallest integer n with worst_case_alpha_max(n) < ε: floor(threshold) + 1 (saturates at 2^64−1).
std::uint64_t smallest_integer_n_below(double epsilon, double spread, double theta);

}  // namespace sharp::dispersion

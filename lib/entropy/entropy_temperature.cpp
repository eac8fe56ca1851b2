#include "entropy/entropy_temperature.hpp"

#include <algorithm>
#include <cmath>

#include "core/compensated_sum.hpp"
#include "core/parallel_for.hpp"

namespace sharp::entropy {

EntropyAndVariance softmax_entropy_and_variance(const double* e, std::size_t n, double beta) {
  const double e_max = *std::max_element(e, e + n);
  // Weights w_j = exp(β(e_j − e_max)) ∈ (0, 1]; the c maxima contribute exactly 1 each and the
  // rest sum to r, so ln s = ln c + log1p(r/c) keeps full relative precision when r is tiny (a
  // sharp row, where H itself is tiny). The sums are compensated: finite differences of H take
  // the difference of two nearly equal sums, and naive rounding (n·eps) would swamp it.
  double c = 0;
  CompensatedSum r_sum, gap_sum, d_sum;
  for (std::size_t j = 0; j < n; ++j) {
    const double d = e_max - e[j];
    if (d == 0) {
      c += 1;
      continue;
    }
    const double w = std::exp(-beta * d);
    r_sum.add(w);
    gap_sum.add(w * beta * d);
    d_sum.add(w * d);
  }
  const double r = r_sum.total(), gap = gap_sum.total(), s = c + r;
  const double mean_d = d_sum.total() / s;
  CompensatedSum var;
  for (std::size_t j = 0; j < n; ++j) {
    const double d = e_max - e[j];
    const double dev = d - mean_d;
    var.add(std::exp(-beta * d) * dev * dev);
  }
  const double excess = std::log1p(r / c) + gap / s;
  return {std::log(c) + excess, excess, var.total() / s};
}

EntropyCurve entropy_temperature_curve(const std::vector<double>& e, const std::vector<double>& betas, int threads) {
  const std::size_t S = betas.size();
  EntropyCurve c{betas, std::vector<double>(S), std::vector<double>(S), std::vector<double>(S)};
  parallel_for(S, Loop{"entropy-temperature/betas", threads}, [&](std::size_t i) {
    const double b = betas[i];
    const EntropyAndVariance at = softmax_entropy_and_variance(e.data(), e.size(), b);
    const double h = 1e-4 * std::max(1.0, b);
    auto excess = [&](double beta) { return softmax_entropy_and_variance(e.data(), e.size(), beta).excess; };
    c.entropy[i] = at.entropy;
    c.dH_dbeta[i] = -b * at.variance;
    // Five-point central difference (error O(h⁴)) of H − ln c, which has the same derivative.
    c.dH_dbeta_fd[i] = (8 * (excess(b + h) - excess(b - h)) - (excess(b + 2 * h) - excess(b - 2 * h))) / (12 * h);
  });
  return c;
}

}  // namespace sharp::entropy

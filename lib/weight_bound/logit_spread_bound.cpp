#include "weight_bound/logit_spread_bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "linalg/largest_singular_value.hpp"
#include "rng/counter_rng.hpp"

namespace sharp::weight_bound {

SpreadBoundTrial spread_bound_trial(std::int64_t n, std::int64_t d_model, std::int64_t d_head, double weight_scale,
                                    double input_scale, std::uint64_t weights_key, std::uint64_t inputs_key) {
  const std::size_t d = static_cast<std::size_t>(d_model), h = static_cast<std::size_t>(d_head);
  const std::uint64_t q_key = rng::child_key(weights_key, 0), k_key = rng::child_key(weights_key, 1);
  std::vector<double> q(h * d), k(h * d);  // [d_head, d_model]
  rng::fill_normal(q_key, 0, q.data(), q.size());
  rng::fill_normal(k_key, 0, k.data(), k.size());
  const double w = weight_scale / std::sqrt(double(d));
  for (double& v : q) v *= w;
  for (double& v : k) v *= w;

  std::vector<double> y(d);
  rng::fill_normal(inputs_key, 0, y.data(), d);  // index 0..d-1: y; then x_i at (1+i)·d
  for (double& v : y) v *= input_scale;

  // u = Kᵀ(Q y) [d_model], so e_i = u·x_i: one d-vector product per item.
  std::vector<double> qy(h, 0.0), u(d, 0.0);
  for (std::size_t r = 0; r < h; ++r)
    for (std::size_t c = 0; c < d; ++c) qy[r] += q[r * d + c] * y[c];
  for (std::size_t r = 0; r < h; ++r)
    for (std::size_t c = 0; c < d; ++c) u[c] += k[r * d + c] * qy[r];

  double lo = std::numeric_limits<double>::infinity(), hi = -lo, max_norm2 = 0;
  std::vector<double> x(d);
  for (std::int64_t i = 0; i < n; ++i) {
    rng::fill_normal(inputs_key, (1 + std::uint64_t(i)) * d, x.data(), d);
    double e = 0, norm2 = 0;
    for (std::size_t c = 0; c < d; ++c) {
      x[c] *= input_scale;
      e += u[c] * x[c];
      norm2 += x[c] * x[c];
    }
    lo = std::min(lo, e);
    hi = std::max(hi, e);
    max_norm2 = std::max(max_norm2, norm2);
  }
  double y_norm2 = 0;
  for (double v : y) y_norm2 += v * v;
  const double bound = 2 * linalg::largest_singular_value(q.data(), h, d) *
                       linalg::largest_singular_value(k.data(), h, d) * std::sqrt(y_norm2) * std::sqrt(max_norm2);
  return {hi - lo, bound};
}

}  // namespace sharp::weight_bound

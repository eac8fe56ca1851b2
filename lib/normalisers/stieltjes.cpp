// Stieltjes normaliser (docs/science.md#stieltjes): p_i = (lambda - z_i)^(-q), lambda > max z with sum p = 1, q >= 1.
// With mu = lambda - max z and g_i = max z - z_i >= 0, f(mu) = sum (mu + g_i)^(-q) - 1 is convex and
// decreasing on mu in [1, n^(1/q)] (f >= 0 at 1: the max term alone is 1; f <= 0 at n^(1/q)), so
// Newton steps from the left end never overshoot; a bisection step guards slow progress.
// Gradients (h_i = q p_i / (mu + g_i) = q p_i^(1 + 1/q)):
//   dp/dz = diag(h) - h h^T / sum h,
//   dp_i/dq = (1/q) [p_i ln p_i - h_i (sum_j p_j ln p_j) / sum h].
#include <cmath>

#include "core/errors.hpp"
#include "core/simd_exp.hpp"
#include "normalisers/implementation.hpp"
#include "normalisers/registry.hpp"
#include "normalisers/row_checks.hpp"
#include "normalisers/simd_io.hpp"
#include "normalisers/sparse_thresholds.hpp"

namespace sharp::norm {

namespace {

using simd::batch_d;

// Terms (mu + g_i)^(-q) with g_i = max z - z_i (0 for a masked z_i = -inf), their sum f and the sum
// of t_i / (mu + g_i), vectorised; the terms are stored when `terms` is not null. Integer q (the
// usual 1, 2, 4, 16): 1/x raised by repeated squaring; otherwise exp(-q ln x), -q ln x <= 0 as x >= 1.
struct TermSums {
  double f;  // sum of terms
  double inverse;  // sum of terms / (mu + g)
};
template <class T>
TermSums stieltjes_terms(const T* z, std::size_t n, double max, double mu, double q, T* terms) {
  const bool integer = q == std::floor(q) && q <= 64.0;
  const auto exponent = static_cast<unsigned>(q);
  auto term = [&](batch_d x, batch_d& inv) {
    inv = batch_d(1.0) / x;
    if (!integer) return sharp::simd::exp_bounded(batch_d(-q) * xsimd::log(x));
    batch_d result(1.0), base = inv;
    for (unsigned e = exponent; e != 0; e >>= 1) {
      if (e & 1u) result *= base;
      base *= base;
    }
    return result;
  };
  const batch_d m(mu), top(max);
  auto x_of = [&](batch_d zb) { return m + (top - zb); };  // mu + g
  batch_d f0(0.0), f1(0.0), d0(0.0), d1(0.0);
  constexpr std::size_t L = simd::kLanes;
  std::size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    batch_d inv0, inv1;
    const batch_d t0 = term(x_of(simd::load_batch(z + i)), inv0);
    const batch_d t1 = term(x_of(simd::load_batch(z + i + L)), inv1);
    f0 += t0;
    f1 += t1;
    d0 = xsimd::fma(t0, inv0, d0);
    d1 = xsimd::fma(t1, inv1, d1);
    if (terms) {
      simd::store_batch(terms + i, t0);
      simd::store_batch(terms + i + L, t1);
    }
  }
  for (; i < n; i += L) {  // padding with -inf (masked) gives terms of 0
    batch_d inv;
    const std::size_t count = std::min(L, n - i);
    const batch_d t = term(x_of(simd::load_partial(z + i, count, -INFINITY)), inv);
    f0 += t;
    d0 = xsimd::fma(t, inv, d0);
    if (terms) simd::store_partial(terms + i, count, t);
  }
  return {xsimd::hadd(f0 + f1), xsimd::hadd(d0 + d1)};
}

}  // namespace

template <class T>
RootResult stieltjes_shift(const T* z, std::size_t n, double max, std::size_t unmasked, double q, RootMethod method,
                           double tolerance) {
  // f(mu) = sum (mu + g_i)^(-q) - 1 and f'(mu) = -q sum (mu + g_i)^(-q-1).
  auto f = [&](double mu, double* derivative) {
    const TermSums s = stieltjes_terms(z, n, max, mu, q, static_cast<T*>(nullptr));
    if (derivative) *derivative = -q * s.inverse;
    return s.f - 1.0;
  };
  const double hi = std::pow(static_cast<double>(unmasked), 1.0 / q);
  return find_root_convex_decreasing(
      f, [](double) {}, 1.0, hi, method, tolerance);
}

template RootResult stieltjes_shift<double>(const double*, std::size_t, double, std::size_t, double, RootMethod,
                                            double);
template RootResult stieltjes_shift<float>(const float*, std::size_t, double, std::size_t, double, RootMethod, double);

namespace detail {
namespace {

class Stieltjes final : public TemplatedForward<Stieltjes> {
 public:
  explicit Stieltjes(const Spec& spec) : TemplatedForward(spec), q_(spec.param("q")) {}
  std::vector<std::string> parameter_names() const override { return {"q"}; }

  template <class T>
  void impl(const T* z, T* p, std::size_t n, Workspace&) const {
    const RowScan scan = scan_row(z, n);
    const double mu = stieltjes_shift(z, n, scan.max, scan.unmasked, q_, RootMethod::SafeguardedNewton, 1e-15).root;
    const double inv_sum = 1.0 / stieltjes_terms(z, n, scan.max, mu, q_, p).f;  // absorbs the tolerance
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<double>(p[i]) * inv_sum);
  }

 protected:
  void backward_row(const double*, const double* p, const double* v, double* grad_z, double* grad_params, std::size_t n,
                    Workspace& ws) const override {
    double* h = ws.doubles(0, n);
    for (std::size_t i = 0; i < n; ++i) h[i] = p[i] > 0.0 ? q_ * p[i] * std::pow(p[i], 1.0 / q_) : 0.0;
    weighted_projection_vjp(h, v, grad_z, n);
    if (!grad_params) return;
    double hs = 0.0, hv = 0.0, plogp = 0.0, vplogp = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (p[i] <= 0.0) continue;
      const double pl = p[i] * std::log(p[i]);
      hs += h[i];
      hv += h[i] * v[i];
      plogp += pl;
      vplogp += v[i] * pl;
    }
    grad_params[0] = (vplogp - hv * plogp / hs) / q_;
  }

 private:
  double q_;
};

const NormaliserRegistration kStieltjes{{
    .name = "stieltjes",
    .formula = "p_i = (λ − z_i)^(−q), λ > max z with Σ p = 1",
    .section = "stieltjes",
    .example = "stieltjes:q=4",
    .parameters = {{"q", std::nullopt, ParameterRange::at_least(1.0), "order"}},
    .make = [](const Spec& s) { return std::make_unique<Stieltjes>(s); },
}};

}  // namespace

}  // namespace detail
}  // namespace sharp::norm

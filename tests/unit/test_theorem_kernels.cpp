// Kernels of docs/science.md#weight-norm-bound and docs/science.md#entropy-falls-with-beta against independent closed forms: σ_max (Jacobi) on matrices with
// known singular values, the entropy/variance of softmax(β·e) against a direct long-double
// computation, the identity dH/dβ = −β·Var, and the weight-norm bound on random instances.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "entropy/entropy_temperature.hpp"
#include "linalg/largest_singular_value.hpp"
#include "rng/counter_rng.hpp"
#include "weight_bound/logit_spread_bound.hpp"

using namespace sharp;

TEST(LargestSingularValue, DiagonalAndRankOne) {
  // diag(3, -7, 2) padded to 3×5: σ_max = 7.
  std::vector<double> a(15, 0.0);
  a[0] = 3, a[6] = -7, a[12] = 2;
  EXPECT_NEAR(linalg::largest_singular_value(a.data(), 3, 5), 7.0, 1e-14);
  // The same 15 numbers read as a 5×3 matrix put 3, −7, 2 in column 0: σ_max = √62.
  EXPECT_NEAR(linalg::largest_singular_value(a.data(), 5, 3), std::sqrt(62.0), 1e-14);
  // u vᵀ has the single singular value ‖u‖‖v‖.
  const std::vector<double> u = {1, 2, -2}, v = {0.5, -1, 3, 2};
  std::vector<double> r;
  for (double x : u)
    for (double y : v) r.push_back(x * y);
  EXPECT_NEAR(linalg::largest_singular_value(r.data(), 3, 4), 3.0 * std::sqrt(14.25), 1e-13);
}

TEST(LargestSingularValue, MatchesPowerIterationOnRandomMatrices) {
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const std::size_t m = 7 + seed, n = 12;
    std::vector<double> a(m * n);
    rng::fill_normal(seed + 100, 0, a.data(), a.size());
    // Power iteration on AᵀA, long enough to converge for these sizes.
    std::vector<double> x(n, 1.0), y(m);
    double lambda = 0;
    for (int it = 0; it < 20000; ++it) {
      for (std::size_t i = 0; i < m; ++i) y[i] = std::inner_product(&a[i * n], &a[i * n] + n, x.begin(), 0.0);
      std::vector<double> z(n, 0.0);
      for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) z[j] += a[i * n + j] * y[i];
      lambda = std::sqrt(std::inner_product(z.begin(), z.end(), z.begin(), 0.0));
      for (std::size_t j = 0; j < n; ++j) x[j] = z[j] / lambda;
    }
    EXPECT_NEAR(linalg::largest_singular_value(a.data(), m, n), std::sqrt(lambda), 1e-10 * std::sqrt(lambda));
  }
}

namespace {
// Direct definition in long double: p = softmax(βe), H = −Σ p ln p, Var = Σ p e² − (Σ p e)².
void direct(const std::vector<double>& e, double beta, long double& H, long double& var) {
  long double m = *std::max_element(e.begin(), e.end()), s = 0, mean = 0, sq = 0;
  for (double x : e) s += std::exp((long double)beta * (x - m));
  H = 0;
  for (double x : e) {
    const long double p = std::exp((long double)beta * (x - m)) / s;
    if (p > 0) H -= p * std::log(p);
    mean += p * x;
    sq += p * (long double)x * x;
  }
  var = sq - mean * mean;
}
}  // namespace

TEST(EntropyTemperature, EntropyAndVarianceMatchTheDefinition) {
  for (std::size_t n : {2u, 17u, 1000u}) {
    std::vector<double> e(n);
    rng::fill_uniform(n, 0, e.data(), n);
    for (double& x : e) x *= 4;
    for (double beta : {0.1, 1.0, 3.0}) {
      long double H, var;
      direct(e, beta, H, var);
      const auto got = entropy::softmax_entropy_and_variance(e.data(), n, beta);
      EXPECT_NEAR(got.entropy, double(H), 1e-13 * std::max(1.0L, H)) << n << " " << beta;
      EXPECT_NEAR(got.variance, double(var), 1e-12 * std::max(1.0L, var)) << n << " " << beta;
    }
  }
}

TEST(EntropyTemperature, SharpRowsKeepRelativePrecision) {
  // One logit at 4, 15 at 0, β = 8: H ≈ 15 e^{-32} (1 + 32) ≈ 6.3e-12, far below ln-rounding of 1.
  std::vector<double> e(16, 0.0);
  e[3] = 4;
  const auto got = entropy::softmax_entropy_and_variance(e.data(), e.size(), 8.0);
  const double r = 15 * std::exp(-32.0);
  const double exact = std::log1p(r) + r * 32 / (1 + r);
  EXPECT_NEAR(got.entropy, exact, 1e-12 * exact);
}

TEST(EntropyTemperature, CurveIsMonotoneAndDerivativeMatchesClosedForm) {
  std::vector<double> e(4096);
  rng::fill_normal(7, 0, e.data(), e.size());
  std::vector<double> betas;
  for (int i = 1; i <= 40; ++i) betas.push_back(0.2 * i);
  const auto c1 = entropy::entropy_temperature_curve(e, betas, 1);
  const auto c2 = entropy::entropy_temperature_curve(e, betas, 2);
  for (std::size_t i = 0; i < betas.size(); ++i) {
    if (i) EXPECT_LT(c1.entropy[i], c1.entropy[i - 1]);
    EXPECT_NEAR(c1.dH_dbeta_fd[i], c1.dH_dbeta[i], 1e-7 * std::abs(c1.dH_dbeta[i]));
    EXPECT_EQ(c1.entropy[i], c2.entropy[i]);          // thread count never changes data
    EXPECT_EQ(c1.dH_dbeta_fd[i], c2.dH_dbeta_fd[i]);
  }
}

TEST(WeightBound, NeverViolatedAndScalesQuadratically) {
  for (std::uint64_t t = 0; t < 50; ++t) {
    const auto a = weight_bound::spread_bound_trial(64, 16, 8, 1.0, 1.0, 10 + t, 1000 + t);
    EXPECT_GT(a.delta, 0);
    EXPECT_LE(a.delta, a.bound);
    // Same draws, scaled weights and inputs: δ and the bound scale by w²·s².
    const auto b = weight_bound::spread_bound_trial(64, 16, 8, 2.0, 3.0, 10 + t, 1000 + t);
    EXPECT_NEAR(b.delta, 36 * a.delta, 1e-12 * 36 * a.delta);
    EXPECT_NEAR(b.bound, 36 * a.bound, 1e-12 * 36 * a.bound);
  }
}

TEST(WeightBound, TightWhenItCanBe) {
  // d_model = d_head = 1: e_i = q k y x_i, δ = |q k y|(max x − min x) and the bound is
  // 2|q||k||y|max|x_i|: the ratio is (max x − min x)/(2 max|x|) ≤ 1 and close to 1 for many items.
  const auto a = weight_bound::spread_bound_trial(100000, 1, 1, 1.0, 1.0, 5, 6);
  EXPECT_LE(a.delta, a.bound);
  EXPECT_GT(a.delta / a.bound, 0.9);
}

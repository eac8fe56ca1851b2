// SPEC §3's reconstruction of the adaptive-temperature fit: polyfit recovers a known polynomial
// (numpy.polyfit's coefficient order), and best_beta finds a β* in [1, β_max] at least as good as
// β = 1 and as every point of a fine grid, with H the entropy of the head at β = 1.
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "max_retrieval/beta_fit.hpp"
#include "max_retrieval/data.hpp"
#include "nn/parameters.hpp"

namespace {

using namespace sharp::max_retrieval;

TEST(Polyfit, RecoversThePapersPolynomialFromExactPoints) {
  const std::vector<double> paper = {-0.037, 0.481, -2.3, 4.917, -1.791};
  std::vector<double> x, y;
  for (int i = 0; i <= 60; ++i) {
    x.push_back(0.1 * i);
    y.push_back(polyval(paper, x.back()));
  }
  const auto c = polyfit(x, y, 4);
  ASSERT_EQ(c.size(), 5u);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_NEAR(c[k], paper[k], 1e-10) << "coefficient " << k;
}

TEST(Polyfit, IsTheLeastSquaresSolution) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 0.3);
  std::vector<double> x, y;
  for (int i = 0; i < 200; ++i) {
    x.push_back(6.0 * i / 199);
    y.push_back(1.0 + 0.5 * x.back() - 0.1 * x.back() * x.back() + noise(rng));
  }
  const auto c = polyfit(x, y, 2);
  // The residual is orthogonal to every column 1, x, x^2 (the normal equations).
  for (int power = 0; power <= 2; ++power) {
    double dot = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) dot += (y[i] - polyval(c, x[i])) * std::pow(x[i], power);
    EXPECT_NEAR(dot, 0.0, 1e-9);
  }
  EXPECT_THROW(polyfit({1.0, 2.0}, {1.0, 2.0}, 4), sharp::NumericError);
}

TEST(BestBeta, IsInRangeAndBeatsBetaOneAndTheGrid) {
  const ModelLayout layout = make_model_layout({16, 1});
  std::vector<float> params(layout.params.size());
  sharp::nn::lecun_normal_init(layout.params, params.data(), 5);
  for (std::uint64_t s = 0; s < 5; ++s) {
    const BetaStar b = best_beta(layout, params.data(), set_sample_key(11, std::int64_t(s)), 64, 20.0);
    EXPECT_GE(b.beta_star, 1.0);
    EXPECT_LE(b.beta_star, 20.0);
    EXPECT_GE(b.p_star, b.p_one);
    EXPECT_GT(b.entropy, 0.0);
    EXPECT_LE(b.entropy, std::log(64.0) + 1e-12);
    // No β on a finer grid does better (beyond the search tolerance).
    for (double beta = 1.0; beta <= 20.0; beta += 0.1) {
      const BetaStar at = best_beta(layout, params.data(), set_sample_key(11, std::int64_t(s)), 64, beta);
      EXPECT_LE(at.p_star, b.p_star + 1e-6);
    }
  }
}

}  // namespace

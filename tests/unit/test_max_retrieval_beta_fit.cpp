// The reconstructed fit of the adaptive-temperature polynomial (docs/science.md#refitting-the-polynomial): polyfit recovers a known polynomial
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
    ASSERT_EQ(b.log_p_grid.size(), 77u);   // β = 1, 1.25, …, 20
    EXPECT_NEAR(std::exp(b.log_p_grid[0]), b.p_one, 1e-15);
    EXPECT_NEAR(log_p_at(b.log_p_grid, 1.0), std::log(b.p_one), 1e-12);
    // No β on a finer grid does better (beyond the search tolerance).
    for (double beta = 1.0; beta <= 20.0; beta += 0.1) {
      const BetaStar at = best_beta(layout, params.data(), set_sample_key(11, std::int64_t(s)), 64, beta);
      EXPECT_LE(at.p_star, b.p_star + 1e-6);
    }
  }
}

// Sets whose ln p(β) is a concave parabola with its peak at a known β: bins of sets with one
// common peak recover it exactly (the parabola through three grid points is the parabola), the
// bins are ordered by entropy with equal counts, and the gain is the bin's improvement over β = 1.
TEST(BinnedBeta, RecoversTheCommonPeakOfEachEntropyLevel) {
  auto grid_of = [](double peak, double scale) {
    std::vector<double> g;
    for (std::size_t k = 0; k < 77; ++k) {
      const double beta = 1.0 + 0.25 * double(k);
      g.push_back(-scale * (beta - peak) * (beta - peak));
    }
    return g;
  };
  std::vector<double> entropy;
  std::vector<std::vector<double>> grids;
  // Entropy levels 0.5 (peak 1: β = 1 is best), 2 (peak 3.1), 4 (peak 7.3): 7, 7, 6 sets, interleaved.
  const double levels[3][2] = {{0.5, 1.0}, {2.0, 3.1}, {4.0, 7.3}};
  for (int i = 0; i < 20; ++i) {
    const auto& L = levels[i % 3];
    entropy.push_back(L[0] + 1e-3 * double(i % 5));
    grids.push_back(grid_of(L[1], 1.0 + 0.1 * double(i % 4)));
  }
  const auto bins = binned_beta(entropy, grids, 3);
  ASSERT_EQ(bins.size(), 3u);
  EXPECT_EQ(bins[0].count, 7u);
  EXPECT_EQ(bins[1].count, 7u);
  EXPECT_EQ(bins[2].count, 6u);
  EXPECT_LT(bins[0].entropy, 1.0);
  EXPECT_NEAR(bins[1].entropy, 2.0, 0.01);
  EXPECT_NEAR(bins[2].entropy, 4.0, 0.01);
  EXPECT_DOUBLE_EQ(bins[0].beta, 1.0);
  EXPECT_NEAR(bins[1].beta, 3.1, 1e-12);
  EXPECT_NEAR(bins[2].beta, 7.3, 1e-12);
  EXPECT_DOUBLE_EQ(bins[0].gain, 0.0);
  EXPECT_GT(bins[2].gain, bins[1].gain);
  EXPECT_THROW(binned_beta(entropy, grids, 0), sharp::BadInput);
  EXPECT_THROW(binned_beta(entropy, grids, 21), sharp::BadInput);
  // Linear interpolation between grid points, clamped at the ends.
  const auto g = grid_of(3.0, 1.0);
  EXPECT_NEAR(log_p_at(g, 1.125), 0.5 * (g[0] + g[1]), 1e-15);
  EXPECT_EQ(log_p_at(g, 0.5), g[0]);
  EXPECT_EQ(log_p_at(g, 25.0), g.back());
}

}  // namespace

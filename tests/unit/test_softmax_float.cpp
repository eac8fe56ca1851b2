// Float rows of the softmax family in float lanes (normalisers/softmax_float_block.hpp) against the
// double kernels on the same logits: every output within 4 float ulp of the double result rounded
// to float (tests/support/float_ulps.hpp), over random rows of many lengths and scales, masked
// entries and blocks, spikes far above a block's reference estimate, large offsets (the fused
// reference and the double-lanes fallback), and the one-pass statistics (entropy, log-sum-exp,
// adaptive beta) of float rows to float precision (1e-6 relative) of the double ones, while
// adaptive_row_beta of a float row (the beta the normaliser uses) equals the double row's.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "normalisers/normaliser.hpp"
#include "normalisers/streaming.hpp"
#include "support/float_ulps.hpp"
#include "support/random_rows.hpp"

namespace {

using sharp::test::random_normal;
constexpr double kMasked = -std::numeric_limits<double>::infinity();
constexpr double kMaxUlps = 4.0;

const char* const kSpecs[] = {"softmax", "softmax:beta=0.25", "softmax:beta=4", "adaptive", "ssmax:s=1", "ssmax:s=0.43"};

std::string sci(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", x);
  return b;
}

// Worst ulps of float forward against double forward of the same (float-exact) rows.
double worst_ulps(const std::string& spec, std::vector<double> z, std::size_t rows, std::size_t n, std::string* where) {
  std::vector<float> zf(z.begin(), z.end());
  const std::vector<double> zd(zf.begin(), zf.end());
  std::vector<double> p(zd.size());
  std::vector<float> pf(zd.size());
  const auto nz = sharp::norm::make_normaliser(spec);
  nz->forward(zd.data(), p.data(), rows, n);
  nz->forward(zf.data(), pf.data(), rows, n);
  std::size_t at = 0;
  const double worst = sharp::test::worst_float_ulps(pf.data(), p.data(), p.size(), &at);
  *where = spec + " rows " + std::to_string(rows) + " n " + std::to_string(n) + " at " + std::to_string(at) +
           ": " + sci(pf[at]) + " vs " + sci(p[at]) + " (" +
           std::to_string(sharp::test::float_ulps(pf[at], p[at])) + " ulps)";
  return worst;
}

TEST(SoftmaxFloat, RandomRowsWithinFourUlps) {
  double overall = 0.0;
  std::uint64_t seed = 1;
  for (const char* spec : kSpecs) {
    for (std::size_t n : {65, 100, 1000, 1024, 2047, 2048, 2049, 5000, 20000}) {
      for (double sigma : {0.1, 1.0, 4.0, 30.0}) {
        const std::size_t rows = n > 4000 ? 1 : 3;
        std::string where;
        const double w = worst_ulps(spec, random_normal(rows * n, seed++, sigma), rows, n, &where);
        overall = std::max(overall, w);
        EXPECT_LE(w, kMaxUlps) << where << " sigma " << sigma;
      }
    }
  }
  std::printf("random rows: worst %.2f float ulps\n", overall);
}

TEST(SoftmaxFloat, MaskedEntriesAndBlocksWithinFourUlps) {
  for (const char* spec : kSpecs) {
    for (std::size_t n : {100, 3000, 9000}) {
      std::vector<double> z = random_normal(n, 7 + n, 3.0);
      for (std::size_t i = 0; i < n; i += 3) z[i] = kMasked;
      if (n > 4096) std::fill(z.begin() + 2048, z.begin() + 4096, kMasked);   // a whole masked block
      std::string where;
      EXPECT_LE(worst_ulps(spec, z, 1, n, &where), kMaxUlps) << where;
    }
  }
}

// Extreme logits: spikes far above the first entries (the block is redone with its exact max), huge
// and tiny spreads, offsets of 1e4 (fused reference) and 1e30 (beyond the float lanes' reference:
// the double lanes), and a row whose weights span the whole float range.
TEST(SoftmaxFloat, ExtremeLogitsWithinFourUlps) {
  for (const char* spec : kSpecs) {
    for (double offset : {0.0, 1e4, -3e4, 1e30}) {
      for (double spike : {0.0, 50.0, 1000.0}) {
        std::vector<double> z = random_normal(5000, 99, 1.0);
        z[100] += spike;
        z[3000] += spike / 2;
        for (double& x : z) x += offset;
        std::string where;
        EXPECT_LE(worst_ulps(spec, z, 1, z.size(), &where), kMaxUlps) << where << " offset " << offset << " spike " << spike;
      }
    }
    std::vector<double> wide(4096);
    for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = -0.05 * static_cast<double>(i);   // e^0 .. e^-205
    std::string where;
    EXPECT_LE(worst_ulps(spec, wide, 1, wide.size(), &where), kMaxUlps) << where;
  }
}

TEST(SoftmaxFloat, StatisticsCloseToDouble) {
  for (std::size_t n : {std::size_t{100}, std::size_t{5000}, std::size_t{1} << 17}) {
    for (double sigma : {0.3, 4.0}) {
      const std::vector<double> z0 = random_normal(n, 31 + n, sigma);
      const std::vector<float> zf(z0.begin(), z0.end());
      const std::vector<double> zd(zf.begin(), zf.end());
      const auto d = sharp::norm::softmax_summary(zd.data(), n);
      const auto f = sharp::norm::softmax_summary(zf.data(), n);
      EXPECT_EQ(f.max, d.max);
      EXPECT_NEAR(f.log_sum_exp, d.log_sum_exp, 1e-7 * std::fabs(d.log_sum_exp)) << n << " " << sigma;
      // Float precision: float terms, and the entropy a difference ln s − t/s of larger numbers.
      EXPECT_NEAR(f.entropy, d.entropy, 1e-6 * std::max(1.0, d.entropy)) << n << " " << sigma;
      EXPECT_NEAR(f.adaptive_beta, d.adaptive_beta, 5e-6 * d.adaptive_beta) << n << " " << sigma;
      const auto bf = sharp::norm::adaptive_row_beta(zf.data(), n), bd = sharp::norm::adaptive_row_beta(zd.data(), n);
      EXPECT_NEAR(bf.beta, bd.beta, 1e-13 * bd.beta) << n << " " << sigma;
      EXPECT_NEAR(bf.entropy, bd.entropy, 1e-13 * bd.entropy) << n << " " << sigma;
    }
  }
}

// The one-pass statistics of float rows whose max lies far above the first entries' (the block's
// reference estimate): float lanes compute 2^y in float, so a block whose terms would leave the float
// range must be redone with its exact max (a spike of 100 gave log-sum-exp 6.93 instead of 100).
TEST(SoftmaxFloat, StatisticsOfSpikesFarAboveTheFirstEntries) {
  for (double spike : {30.0, 70.0, 100.0, 200.0, 400.0, 600.0}) {
    {
      std::vector<double> z0 = random_normal(5000, 41, 1.0);
      z0[100] += spike;
      z0[3000] += spike / 2;
      const std::vector<float> zf(z0.begin(), z0.end());
      const std::vector<double> zd(zf.begin(), zf.end());
      const auto d = sharp::norm::softmax_summary(zd.data(), zd.size());
      const auto f = sharp::norm::softmax_summary(zf.data(), zf.size());
      EXPECT_EQ(f.max, d.max);
      EXPECT_NEAR(f.log_sum_exp, d.log_sum_exp, 1e-7 * std::fabs(d.log_sum_exp)) << spike;
      EXPECT_NEAR(f.entropy, d.entropy, 1e-6 * std::max(1.0, d.entropy)) << spike;
    }
  }
}

}  // namespace

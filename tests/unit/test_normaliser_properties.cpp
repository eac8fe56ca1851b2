// Properties of every normaliser (docs/science.md#remedies): valid distributions (also at the extremes: n = 1,
// all-equal rows, ties, +-1e30, rows shifted by 1e6), permutation equivariance, shift invariance,
// entropy monotone in beta, adaptive never raising entropy, masked rows equal to their unmasked
// sub-row, supports shrinking with the scale, float vs double, thread-count independence, and NaN
// errors that name the row.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/random_rows.hpp"

#include "core/errors.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/sparse_thresholds.hpp"

namespace {

using sharp::test::random_normal;

using sharp::norm::make_normaliser;
using sharp::norm::Normaliser;
using Row = std::vector<double>;
constexpr double kMasked = -std::numeric_limits<double>::infinity();

const std::vector<std::string>& all_specs() {
  static const std::vector<std::string> specs = {
      "softmax", "softmax:beta=0.25", "softmax:beta=4", "adaptive", "ssmax:s=1", "ssmax:s=0.43",
      "topk:k=1", "topk:k=3", "argmax", "sparsemax", "entmax15", "entmax:alpha=1.25",
      "entmax:alpha=1.5", "entmax:alpha=1.75", "entmax:alpha=2", "asentmax:b=0.5:gamma=1",
      "asentmax:b=1:gamma=0.5:delta=0.5", "stieltjes:q=1", "stieltjes:q=4", "stieltjes:q=16"};
  return specs;
}

Row run(const Normaliser& nz, const Row& z) {
  Row p(z.size());
  nz.forward(z.data(), p.data(), 1, z.size());
  return p;
}

void expect_distribution(const Row& p, const std::string& what) {
  double sum = 0.0;
  for (double x : p) {
    ASSERT_TRUE(std::isfinite(x)) << what;
    EXPECT_GE(x, 0.0) << what;
    sum += x;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12) << what;
}

double max_abs_diff(const Row& a, const Row& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

std::size_t support_size(const Row& p) {
  return static_cast<std::size_t>(std::count_if(p.begin(), p.end(), [](double x) { return x > 0.0; }));
}

class EveryNormaliser : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryNormaliser, RandomRowsAreDistributions) {
  const auto nz = make_normaliser(GetParam());
  std::uint64_t seed = 10;
  for (std::size_t n : {1, 2, 3, 7, 16, 100, 1000, 5000}) {
    for (double sigma : {0.1, 1.0, 10.0}) {
      expect_distribution(run(*nz, random_normal(n, seed++, sigma)), "n=" + std::to_string(n));
    }
  }
}

TEST_P(EveryNormaliser, ExtremeRowsAreDistributions) {
  const auto nz = make_normaliser(GetParam());
  EXPECT_EQ(run(*nz, {3.5}), Row{1.0});
  EXPECT_EQ(run(*nz, {-1e30}), Row{1.0});
  expect_distribution(run(*nz, Row(9, 0.7)), "all equal");
  expect_distribution(run(*nz, {1e30, -1e30, 0.0, 1e30, 5.0}), "+-1e30");
  expect_distribution(run(*nz, {-1e30, -1e30, 1.0, -1e30}), "-1e30");
  Row shifted = random_normal(50, 3, 1.0);
  for (auto& x : shifted) x += 1e6;
  expect_distribution(run(*nz, shifted), "shifted by 1e6");
  Row big = random_normal(4096, 4, 3.0);
  big[17] = 1e30;
  big[99] = -1e30;
  expect_distribution(run(*nz, big), "n=4096 with +-1e30");
}

TEST_P(EveryNormaliser, PermutationEquivariant) {
  const auto nz = make_normaliser(GetParam());
  for (std::size_t n : {5, 64, 3000}) {
    const Row z = random_normal(n, n, 2.0);
    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(n + 1));
    Row zp(n);
    for (std::size_t i = 0; i < n; ++i) zp[i] = z[perm[i]];
    const Row p = run(*nz, z), pp = run(*nz, zp);
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(pp[i] - p[perm[i]]));
    EXPECT_LE(worst, 1e-14) << "n=" << n;
  }
}

// Every method of the family is shift-invariant (Stieltjes too: lambda moves with the shift).
TEST_P(EveryNormaliser, ShiftInvariant) {
  const auto nz = make_normaliser(GetParam());
  for (std::size_t n : {4, 100}) {
    const Row z = random_normal(n, 100 + n, 1.5);
    for (double c : {-3.7, 25.0, 1e6}) {
      Row zc = z;
      for (auto& x : zc) x += c;
      // z + 1e6 is rounded to 1.2e-10: the outputs may move by that much times the scale.
      EXPECT_LE(max_abs_diff(run(*nz, z), run(*nz, zc)), c == 1e6 ? 1e-8 : 1e-13) << "c=" << c;
    }
  }
}

// A masked entry (-inf) gets exactly 0 and the rest equals the unmasked sub-row's result
// (n-dependent methods use n = number of unmasked entries).
TEST_P(EveryNormaliser, MaskedRowsEqualTheirSubRow) {
  const auto nz = make_normaliser(GetParam());
  for (std::size_t n : {3, 17, 600, 5000}) {
    const Row sub = random_normal(n, 200 + n, 1.0);
    Row full;
    std::vector<bool> is_masked;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 3 == 0) {
        full.push_back(kMasked);
        is_masked.push_back(true);
      }
      full.push_back(sub[i]);
      is_masked.push_back(false);
    }
    const Row p_sub = run(*nz, sub), p_full = run(*nz, full);
    std::size_t j = 0;
    double worst = 0.0;
    for (std::size_t i = 0; i < full.size(); ++i) {
      if (is_masked[i]) {
        EXPECT_EQ(p_full[i], 0.0);
      } else {
        worst = std::max(worst, std::fabs(p_full[i] - p_sub[j++]));
      }
    }
    EXPECT_LE(worst, 1e-15) << "n=" << n;
  }
  EXPECT_EQ(run(*nz, {kMasked, 2.0, kMasked}), (Row{0.0, 1.0, 0.0}));
}

TEST_P(EveryNormaliser, FloatAgreesWithDouble) {
  const auto nz = make_normaliser(GetParam());
  for (std::size_t n : {1, 7, 300, 5000}) {
    const std::size_t rows = 3;
    Row z = random_normal(rows * n, 300 + n, 2.0);
    if (n > 7) z[5] = kMasked;
    std::vector<float> zf(z.begin(), z.end());
    Row zd(zf.begin(), zf.end());   // the same logits, exactly
    Row p(rows * n);
    std::vector<float> pf(rows * n);
    nz->forward(zd.data(), p.data(), rows, n);
    nz->forward(zf.data(), pf.data(), rows, n);
    double worst = 0.0;
    for (std::size_t i = 0; i < p.size(); ++i) worst = std::max(worst, std::fabs(p[i] - pf[i]));
    EXPECT_LE(worst, 1e-5) << "forward n=" << n;

    Row v = random_normal(rows * n, 400 + n, 1.0), g(rows * n);
    std::vector<float> vf(v.begin(), v.end()), gf(rows * n);
    Row vd(vf.begin(), vf.end());
    const std::size_t np = nz->parameter_names().size();
    Row gp(rows * np), gpf(rows * np);
    nz->backward(zd.data(), p.data(), vd.data(), g.data(), gp.data(), rows, n);
    nz->backward(zf.data(), pf.data(), vf.data(), gf.data(), gpf.data(), rows, n);
    worst = 0.0;
    double scale = 0.0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      worst = std::max(worst, std::fabs(g[i] - gf[i]));
      scale = std::max(scale, std::fabs(g[i]));
    }
    EXPECT_LE(worst, 1e-5 * std::max(scale, 1.0)) << "backward n=" << n;
  }
}

TEST_P(EveryNormaliser, ResultsDoNotDependOnThreadCount) {
  const auto nz = make_normaliser(GetParam());
  const int saved = omp_get_max_threads();
  for (auto [rows, n] : {std::pair<std::size_t, std::size_t>{64, 1000}, {1, std::size_t(1) << 17}}) {
    const Row z = random_normal(rows * n, rows + n, 2.0);
    Row p1(rows * n), p2(rows * n);
    omp_set_num_threads(1);
    nz->forward(z.data(), p1.data(), rows, n);
    omp_set_num_threads(2);
    nz->forward(z.data(), p2.data(), rows, n);
    EXPECT_EQ(std::memcmp(p1.data(), p2.data(), p1.size() * sizeof(double)), 0) << rows << "x" << n;
  }
  omp_set_num_threads(saved);
}

TEST_P(EveryNormaliser, NanOrPlusInfinityIsAnErrorNamingTheRow) {
  const auto nz = make_normaliser(GetParam());
  const std::size_t rows = 40, n = 1000;   // large enough to run in parallel
  Row z = random_normal(rows * n, 5, 1.0);
  z[27 * n + 13] = std::numeric_limits<double>::quiet_NaN();
  z[31 * n + 2] = std::numeric_limits<double>::infinity();
  Row p(rows * n);
  try {
    nz->forward(z.data(), p.data(), rows, n);
    ADD_FAILURE() << "no error";
  } catch (const sharp::NumericError& e) {
    EXPECT_NE(std::string(e.what()).find("row 27: NaN logit at column 13"), std::string::npos) << e.what();
  }
  z[27 * n + 13] = 0.0;
  try {
    nz->forward(z.data(), p.data(), rows, n);
    ADD_FAILURE() << "no error";
  } catch (const sharp::NumericError& e) {
    EXPECT_NE(std::string(e.what()).find("row 31: +inf logit at column 2"), std::string::npos) << e.what();
  }
  Row masked(4, kMasked);
  EXPECT_THROW(nz->forward(masked.data(), p.data(), 1, 4), sharp::NumericError);
}

INSTANTIATE_TEST_SUITE_P(Family, EveryNormaliser, ::testing::ValuesIn(all_specs()),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

TEST(NormaliserProperties, TiesGoToTheLowerIndex) {
  const Row z = {1.0, 3.0, 2.0, 3.0, 3.0};
  EXPECT_EQ(run(*make_normaliser("argmax"), z), (Row{0, 1, 0, 0, 0}));
  EXPECT_EQ(run(*make_normaliser("topk:k=1"), z), (Row{0, 1, 0, 0, 0}));
  EXPECT_EQ(support_size(run(*make_normaliser("topk:k=2"), z)), 2u);
  const Row p2 = run(*make_normaliser("topk:k=2"), z);
  EXPECT_EQ(p2[1], 0.5);
  EXPECT_EQ(p2[3], 0.5);
  const Row equal(6, -2.0);
  const Row p3 = run(*make_normaliser("topk:k=3"), equal);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(p3[i], i < 3 ? 1.0 / 3 : 0.0, 1e-15);
  for (const auto& spec : {"softmax", "adaptive", "sparsemax", "entmax15", "entmax:alpha=1.25", "stieltjes:q=4"}) {
    for (double x : run(*make_normaliser(spec), equal)) EXPECT_NEAR(x, 1.0 / 6, 1e-14) << spec;
  }
}

TEST(NormaliserProperties, SoftmaxEntropyFallsAsBetaRises) {
  const Row z = random_normal(200, 9, 1.0);
  double previous = INFINITY;
  for (double beta = 0.05; beta < 20; beta *= 1.2) {
    const Row p = run(*make_normaliser("softmax:beta=" + std::to_string(beta)), z);
    const double h = sharp::norm::entropy(p.data(), p.size());
    EXPECT_LT(h, previous) << "beta=" << beta;
    previous = h;
  }
}

TEST(NormaliserProperties, AdaptiveNeverRaisesEntropy) {
  const auto adaptive = make_normaliser("adaptive");
  const auto softmax = make_normaliser("softmax");
  std::uint64_t seed = 50;
  int corrected = 0;
  for (std::size_t n : {2, 8, 64, 512, 4096}) {
    for (double sigma : {0.1, 0.5, 1.0, 2.0, 5.0}) {
      const Row z = random_normal(n, seed++, sigma);
      const Row pa = run(*adaptive, z), ps = run(*softmax, z);
      const double ha = sharp::norm::entropy(pa.data(), n), hs = sharp::norm::entropy(ps.data(), n);
      EXPECT_LE(ha, hs + 1e-12) << "n=" << n << " sigma=" << sigma;
      corrected += ha < hs - 1e-9;
    }
  }
  EXPECT_GT(corrected, 5);
}

TEST(NormaliserProperties, AdaptiveBetaCurve) {
  // docs/science.md#adaptive-temperature: beta > 1 only for H in (0.8486, 5.9445); peak about 2.421 at H about 4.412.
  EXPECT_EQ(sharp::norm::adaptive_beta(0.5), 1.0);
  EXPECT_EQ(sharp::norm::adaptive_beta(0.84), 1.0);
  EXPECT_GT(sharp::norm::adaptive_beta(0.86), 1.0);
  EXPECT_GT(sharp::norm::adaptive_beta(5.94), 1.0);
  EXPECT_EQ(sharp::norm::adaptive_beta(5.95), 1.0);
  double peak = 0.0, at = 0.0;
  for (double h = 0.0; h < 7.0; h += 1e-4) {
    if (sharp::norm::adaptive_beta(h) > peak) peak = sharp::norm::adaptive_beta(h), at = h;
  }
  EXPECT_NEAR(peak, 2.421, 1e-3);
  EXPECT_NEAR(at, 4.412, 1e-3);
  // Uniform attention over more than about 381 items (H = ln n > 5.9445) gets no correction.
  for (std::size_t n : {300, 400}) {
    const Row z(n, 1.0);
    const auto ab = sharp::norm::adaptive_row_beta(z.data(), n);
    EXPECT_NEAR(ab.entropy, std::log(double(n)), 1e-12);
    EXPECT_EQ(ab.beta == 1.0, n > 381) << n;
  }
}

TEST(NormaliserProperties, SparseSupportsShrinkAsTheScaleGrows) {
  const Row z = random_normal(300, 77, 1.0);
  for (const std::string base : {"sparsemax", "entmax15", "entmax:alpha=1.25", "entmax:alpha=1.75"}) {
    std::size_t previous = z.size() + 1;
    for (double scale = 0.05; scale < 50; scale *= 1.5) {
      Row zs = z;
      for (auto& x : zs) x *= scale;
      const std::size_t s = support_size(run(*make_normaliser(base), zs));
      EXPECT_LE(s, previous) << base << " scale=" << scale;
      previous = s;
    }
    EXPECT_EQ(previous, 1u) << base;
  }
  std::size_t previous = z.size() + 1;
  for (double b = 0.0; b < 20; b += 0.5) {
    const std::size_t s = support_size(run(*make_normaliser("asentmax:b=" + std::to_string(b) + ":gamma=1"), z));
    EXPECT_LE(s, previous) << "asentmax b=" << b;
    previous = s;
  }
}

TEST(NormaliserProperties, SsmaxAndAsentmaxUseLogN) {
  const Row z = random_normal(64, 8, 1.0);
  const Row a = run(*make_normaliser("ssmax:s=0.5"), z);
  const Row b = run(*make_normaliser("softmax:beta=" + std::to_string(0.5 * std::log(64.0))), z);
  EXPECT_LE(max_abs_diff(a, b), 1e-6);   // beta printed to 6 digits
  Row scaled = z;
  const double c = 1.0 + 0.5 * std::pow(std::log(64.0), 1.0);
  for (auto& x : scaled) x *= c;
  EXPECT_LE(max_abs_diff(run(*make_normaliser("asentmax:b=0.5:gamma=1"), z), run(*make_normaliser("entmax15"), scaled)),
            1e-14);
}

// The sort-free exact thresholds equal the sort-based reference ones.
TEST(NormaliserProperties, ExactThresholdsMatchSortBasedReference) {
  sharp::norm::Workspace ws;
  std::mt19937_64 rng(5);
  for (std::size_t n : {1, 2, 5, 50, 1000, 20000}) {
    for (double sigma : {0.01, 0.3, 1.0, 10.0}) {
      Row w = random_normal(n, rng(), sigma);
      const double m = *std::max_element(w.begin(), w.end());
      for (auto& x : w) x -= m;
      if (n > 5) w[3] = kMasked;
      if (n > 5) w[4] = w[2];   // a tie
      const double a = sharp::norm::sparsemax_threshold(w.data(), n, ws);
      const double b = sharp::norm::sparsemax_threshold_sorted(w.data(), n, ws);
      EXPECT_NEAR(a, b, 1e-14 * std::max(1.0, std::fabs(b))) << "sparsemax n=" << n << " sigma=" << sigma;
      const double c = sharp::norm::entmax15_threshold(w.data(), n, ws);
      const double d = sharp::norm::entmax15_threshold_sorted(w.data(), n, ws);
      EXPECT_NEAR(c, d, 1e-14 * std::max(1.0, std::fabs(d))) << "entmax15 n=" << n << " sigma=" << sigma;
      for (auto method : {sharp::norm::RootMethod::Bisection, sharp::norm::RootMethod::SafeguardedNewton}) {
        Row w15 = w;
        for (auto& x : w15) x *= 0.5;
        const std::size_t unmasked = n > 5 ? n - 1 : n;
        const auto r = sharp::norm::entmax_threshold(w15.data(), n, unmasked, 1.5, method, 1e-14, ws);
        const double exact = sharp::norm::entmax15_threshold(w15.data(), n, ws);
        EXPECT_NEAR(r.root, exact, 1e-12) << "alpha=1.5 by root finding, n=" << n;
      }
    }
  }
}

}  // namespace

// The one-pass statistics (in memory, and streamed in chunks through a SoftmaxStream) agree
// with a direct two-pass computation, and give the adaptive beta of the normaliser.
#include "normalisers/softmax_summary.hpp"
#include "normalisers/softmax_stream.hpp"

namespace {

TEST(NormaliserStreaming, OnePassStatisticsAgreeWithDirectComputation) {
  for (std::size_t n : {1, 5, 2047, 2048, 2049, 100000}) {
    for (double sigma : {0.1, 2.0, 30.0}) {
      Row z = random_normal(n, n + 7, sigma);
      if (n > 10) z[7] = kMasked;
      if (n > 5000) z[4000] += 40.0;   // one dominant logit
      const double m = *std::max_element(z.begin(), z.end());
      long double s = 0, t = 0;
      for (double x : z) {
        if (x == kMasked) continue;
        const long double e = std::exp(static_cast<long double>(x - m));
        s += e;
        t += (x - m) * e;
      }
      const double lse = m + static_cast<double>(std::log(s));
      const double h = static_cast<double>(std::log(s) - t / s);
      const auto a = sharp::norm::softmax_summary(z.data(), n);
      const auto b = sharp::norm::softmax_summary(z.data(), n, true);
      EXPECT_NEAR(a.log_sum_exp, lse, 1e-12 * std::max(1.0, std::fabs(lse))) << n;
      EXPECT_NEAR(a.entropy, h, 1e-12 * std::max(1.0, h)) << n;
      EXPECT_EQ(a.log_sum_exp, b.log_sum_exp);   // parallel split: same bits
      EXPECT_EQ(a.entropy, b.entropy);
      EXPECT_EQ(a.adaptive_beta, sharp::norm::adaptive_row_beta(z.data(), n).beta);

      sharp::norm::SoftmaxStream stream;
      for (std::size_t i = 0; i < n; i += 3000) stream.add(z.data() + i, std::min<std::size_t>(3000, n - i));
      const auto c = sharp::norm::summarize(stream);
      EXPECT_NEAR(c.log_sum_exp, lse, 1e-12 * std::max(1.0, std::fabs(lse))) << n;
      EXPECT_NEAR(c.entropy, h, 1e-12 * std::max(1.0, h)) << n;
      EXPECT_NEAR(c.adaptive_beta, a.adaptive_beta, 1e-12);
      EXPECT_EQ(c.count, n);
    }
  }
}

}  // namespace

namespace {

// Regression: rounding in f once kept the Stieltjes root finder from ever reaching its tolerance
// (a 16-wide row, N(0, 4^2)); the finders must stop at the resolution of doubles instead.
TEST(NormaliserRootFinding, TerminatesOnManyShortAndLongRows) {
  for (const char* spec : {"stieltjes:q=1", "stieltjes:q=4", "stieltjes:q=16", "stieltjes:q=2.5",
                           "entmax:alpha=1.25", "entmax:alpha=1.75", "entmax:alpha=1.1"}) {
    const auto nz = make_normaliser(spec);
    for (auto [rows, n] : {std::pair<std::size_t, std::size_t>{16384, 16}, {64, 1024}, {1, 300000}}) {
      const Row z = random_normal(rows * n, 2024 + n, 4.0);
      Row p(rows * n);
      EXPECT_NO_THROW(nz->forward(z.data(), p.data(), rows, n)) << spec << " " << rows << "x" << n;
      for (std::size_t r = 0; r < rows; r += 97) {
        double sum = 0.0;
        for (std::size_t i = 0; i < n; ++i) sum += p[r * n + i];
        EXPECT_NEAR(sum, 1.0, 1e-12) << spec;
      }
    }
  }
}

}  // namespace

namespace {

// The block kernel shifts each block by a cheap estimate of its max (the first 16 entries) and
// redoes a block whose true max is far above it: exercise estimates off by 0, 100 and 1000 (the
// excess branch, and the redo for float output and for double), against long double. Offsets of the
// whole row: 0 and 1e6 take the fused shift (y = fma(z, scale, -c), corrected by the residual of c
// per block), 1e16 the subtract-first path (shift·scale above 2^50).
TEST(NormaliserSoftmaxKernel, BlocksWithSpikesAboveTheEstimate) {
  for (double offset : {0.0, 1e6, 1e16})
  for (double spike : {0.0, 100.0, 1000.0}) {
    for (double beta : {1.0, 0.3, 4.0}) {
      Row z = random_normal(5000, 99, 1.0);
      z[100] += spike;
      z[3000] += spike / 2;
      for (double& x : z) x += offset;   // rounded: the reference below uses the rounded row
      const double m = *std::max_element(z.begin(), z.end());
      long double s = 0;
      for (double x : z) s += std::exp(static_cast<long double>(beta) * (x - m));
      Row expected(z.size());
      long double h = 0;
      for (std::size_t i = 0; i < z.size(); ++i) {
        const long double q = std::exp(static_cast<long double>(beta) * (z[i] - m)) / s;
        expected[i] = static_cast<double>(q);
        if (q > 0) h -= q * std::log(q);
      }
      const auto nz = make_normaliser("softmax:beta=" + std::to_string(beta));
      const Row p = run(*nz, z);
      double worst = 0.0;
      std::size_t at = 0;
      for (std::size_t i = 0; i < z.size(); ++i) {
        const double err = std::fabs(p[i] - expected[i]) / (expected[i] + 1e-290);   // exp flushes below e^-708
        if (err > worst) worst = err, at = i;
      }
      EXPECT_LE(worst, 1e-13) << "offset " << offset << " spike " << spike << " beta " << beta << " at " << at
                              << ": " << p[at] << " vs " << expected[at];
      std::vector<float> zf(z.begin(), z.end()), pf(z.size());
      nz->forward(zf.data(), pf.data(), 1, z.size());
      for (std::size_t i = 0; i < z.size(); ++i) ASSERT_TRUE(std::isfinite(pf[i]));
      if (beta == 1.0) {
        const auto summary = sharp::norm::softmax_summary(z.data(), z.size());
        EXPECT_NEAR(summary.entropy, static_cast<double>(h), 2e-13) << "offset " << offset << " spike " << spike;
      }
    }
  }
}

}  // namespace

// The short-row lane kernels (normalisers/simd/softmax_lanes.hpp), which Normaliser::forward uses (AVX2)
// for softmax and adaptive rows of at most 64 entries: the shuffle transposes (double 4x4, float
// 8x8) against lane-by-lane ones; every double row against long double (softmax at several beta,
// adaptive at its own beta), with masked entries, widths that leave a partial column block, and row
// counts that leave a partial group; float rows (8 float lanes) within 4 float ulp of the double
// result rounded to float at every length 1..64, masked entries, extreme logits and adaptive rows on
// both sides of beta's kink; a row's result independent of the rows beside it (bit for bit), also
// in a group with bad rows or rows beyond the float lanes' range; a bad row named by forward.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/float_ulps.hpp"
#include "support/random_rows.hpp"

#include "core/errors.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/simd/softmax_lanes.hpp"

namespace {

using sharp::norm::kFloatLaneRows;
using sharp::norm::kLaneRows;
using sharp::norm::make_normaliser;
using sharp::norm::simd::batch_d;
using Rows = std::vector<double>;
using sharp::test::random_normal;
constexpr double kMasked = -INFINITY;

// softmax(beta z) of one row in long double, masked entries 0.
std::vector<long double> reference_softmax(const double* z, std::size_t n, long double beta) {
  long double m = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) m = std::max<long double>(m, z[i]);
  std::vector<long double> p(n, 0.0L);
  long double s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (z[i] == kMasked) continue;
    p[i] = std::exp(beta * (z[i] - m));
    s += p[i];
  }
  for (auto& v : p) v /= s;
  return p;
}

long double entropy(const std::vector<long double>& p) {
  long double h = 0;
  for (long double v : p) {
    if (v > 0) h -= v * std::log(v);
  }
  return h;
}

TEST(SoftmaxLanes, ShuffleTransposeMatchesLaneByLane) {
  alignas(64) double v[kLaneRows][kLaneRows];
  for (std::size_t i = 0; i < kLaneRows; ++i)
    for (std::size_t j = 0; j < kLaneRows; ++j) v[i][j] = 10.0 * i + j;
  batch_d a[kLaneRows], b[kLaneRows];
  for (std::size_t i = 0; i < kLaneRows; ++i) a[i] = b[i] = batch_d::load_aligned(v[i]);
  sharp::norm::detail::transpose_lanes(a);
  sharp::norm::detail::transpose_lanes_by_lane(b);
  for (std::size_t i = 0; i < kLaneRows; ++i)
    for (std::size_t j = 0; j < kLaneRows; ++j) {
      EXPECT_EQ(a[i].get(j), b[i].get(j));
      EXPECT_EQ(a[i].get(j), v[j][i]);
    }
}

// Every row of a batch against long double: softmax at three temperatures and adaptive (whose
// beta comes from the long-double entropy at beta = 1), relative error <= 1e-13.
TEST(SoftmaxLanes, RowsAgreeWithLongDouble) {
  for (std::size_t n : {1, 2, 3, 5, 16, 17, 31, 64}) {
    const std::size_t rows = 2 * kLaneRows + 1;   // a last, partial group
    Rows z = random_normal(rows * n, static_cast<unsigned>(n), 3.0);
    if (n > 2) z[1] = kMasked;               // row 0: one masked entry
    if (n > 4) z[n + n - 1] = kMasked;       // row 1: its last entry masked
    for (const char* spec : {"softmax", "softmax:beta=0.25", "softmax:beta=4", "adaptive"}) {
      const auto nz = make_normaliser(spec);
      Rows p(rows * n);
      nz->forward(z.data(), p.data(), rows, n);
      for (std::size_t r = 0; r < rows; ++r) {
        const double* zr = z.data() + r * n;
        long double beta = std::string(spec) == "adaptive" ? 1.0L : nz->spec().param("beta");
        if (std::string(spec) == "adaptive") {
          beta = sharp::norm::adaptive_beta(static_cast<double>(entropy(reference_softmax(zr, n, 1.0L))));
        }
        const auto expected = reference_softmax(zr, n, beta);
        for (std::size_t i = 0; i < n; ++i) {
          const long double err = std::fabs(p[r * n + i] - expected[i]) / (expected[i] + 1e-300L);
          ASSERT_LE(static_cast<double>(err), 1e-13) << spec << " n=" << n << " row " << r << " entry " << i;
        }
      }
    }
  }
}

// Lanes compute their rows on their own: a row's bits do not depend on its neighbours, on its
// place in a group, or on the batch size.
TEST(SoftmaxLanes, RowIndependentOfItsNeighbours) {
  const std::size_t n = 16, rows = 11;
  const Rows z = random_normal(rows * n, 7, 4.0);
  for (const char* spec : {"softmax", "adaptive"}) {
    const auto nz = make_normaliser(spec);
    Rows all(rows * n);
    nz->forward(z.data(), all.data(), rows, n);
    for (std::size_t r = 0; r < rows; ++r) {
      Rows alone(n);
      nz->forward(z.data() + r * n, alone.data(), 1, n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(alone[i], all[r * n + i]) << spec << " row " << r;
    }
  }
}

TEST(SoftmaxLanes, FloatAgreesWithDouble) {
  const std::size_t n = 23, rows = 9;
  const Rows z = random_normal(rows * n, 11, 2.0);
  std::vector<float> zf(z.begin(), z.end()), pf(z.size());
  Rows zd(zf.begin(), zf.end()), pd(z.size());   // the same (float) logits
  for (const char* spec : {"softmax", "adaptive"}) {
    const auto nz = make_normaliser(spec);
    nz->forward(zf.data(), pf.data(), rows, n);
    nz->forward(zd.data(), pd.data(), rows, n);
    for (std::size_t i = 0; i < z.size(); ++i) ASSERT_NEAR(pf[i], pd[i], 1e-6 * pd[i] + 1e-30) << spec << " " << i;
  }
}

// A NaN, +inf or all-masked row makes its group go row by row; forward names the lowest such row.
TEST(SoftmaxLanes, BadRowIsNamed) {
  const std::size_t n = 8, rows = 10;
  for (double bad : {std::nan(""), static_cast<double>(INFINITY)}) {
    Rows z = random_normal(rows * n, 3, 1.0);
    z[6 * n + 2] = bad;
    z[9 * n + 1] = bad;
    Rows p(rows * n);
    for (const char* spec : {"softmax", "adaptive"}) {
      try {
        make_normaliser(spec)->forward(z.data(), p.data(), rows, n);
        FAIL() << spec << ": no error";
      } catch (const sharp::NumericError& e) {
        EXPECT_NE(std::string(e.what()).find("row 6:"), std::string::npos) << e.what();
      }
    }
  }
  Rows z = random_normal(rows * n, 4, 1.0);
  for (std::size_t i = 0; i < n; ++i) z[5 * n + i] = kMasked;
  Rows p(rows * n);
  EXPECT_THROW(make_normaliser("softmax")->forward(z.data(), p.data(), rows, n), sharp::NumericError);
}

// The float kernel's 8x8 moves by shuffles against the plain loops, both ways.
TEST(SoftmaxLanes, FloatShuffleTransposesMatchLaneByLane) {
  constexpr std::size_t L = kFloatLaneRows;
  float v[L][L + 3];   // rows of a wider matrix: the moves read and write 8 entries of each row only
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L + 3; ++j) v[i][j] = static_cast<float>(100 * i + j);
  const float* rows[L];
  for (std::size_t i = 0; i < L; ++i) rows[i] = v[i] + 1;
  float a[L][L], b[L][L];
  sharp::norm::detail::float_rows_to_columns(rows, a);
  sharp::norm::detail::float_rows_to_columns_by_lane(rows, b);
  for (std::size_t j = 0; j < L; ++j)
    for (std::size_t i = 0; i < L; ++i) {
      ASSERT_EQ(a[j][i], b[j][i]) << j << " " << i;
      ASSERT_EQ(a[j][i], v[i][j + 1]) << j << " " << i;
    }
  float out_a[L][L + 3] = {}, out_b[L][L + 3] = {};
  float* ra[L];
  float* rb[L];
  for (std::size_t i = 0; i < L; ++i) {
    ra[i] = out_a[i] + 2;
    rb[i] = out_b[i] + 2;
  }
  sharp::norm::detail::float_columns_to_rows(a, ra);
  sharp::norm::detail::float_columns_to_rows_by_lane(a, rb);
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L + 3; ++j) {
      ASSERT_EQ(out_a[i][j], out_b[i][j]) << i << " " << j;
      ASSERT_EQ(out_a[i][j], j >= 2 && j < L + 2 ? v[i][j - 1] : 0.0f) << i << " " << j;
    }
}

// Float forward against double forward of the same (float-exact) rows, in float ulps (infinite if a
// masked entry's weight is not exactly 0); `where` names the worst entry.
double float_vs_double(const std::string& spec, const Rows& z0, std::size_t rows, std::size_t n, std::string* where) {
  const std::vector<float> zf(z0.begin(), z0.end());
  const Rows zd(zf.begin(), zf.end());
  Rows pd(zd.size());
  std::vector<float> pf(zd.size());
  const auto nz = make_normaliser(spec);
  nz->forward(zd.data(), pd.data(), rows, n);
  nz->forward(zf.data(), pf.data(), rows, n);
  std::size_t at = 0;
  double worst = sharp::test::worst_float_ulps(pf.data(), pd.data(), pd.size(), &at);
  for (std::size_t i = 0; i < zf.size(); ++i) {
    if (zf[i] == -INFINITY && pf[i] != 0.0f) {   // masked entries weigh exactly 0
      worst = INFINITY;
      at = i;
    }
  }
  *where = spec + " n " + std::to_string(n) + " entry " + std::to_string(at) + ": " + std::to_string(pf[at]) +
           " vs " + std::to_string(pd[at]);
  return worst;
}

const char* const kLaneSpecs[] = {"softmax", "softmax:beta=0.25", "softmax:beta=4", "adaptive"};

// Every length 1..64 (full and partial column chunks), a partial last group, three spreads, some
// entries masked: float rows within 4 float ulp of the double ones.
TEST(SoftmaxLanes, FloatRowsOfEveryLengthWithinFourUlps) {
  double overall = 0.0;
  for (const char* spec : kLaneSpecs) {
    for (std::size_t n = 1; n <= 64; ++n) {
      for (double sigma : {0.5, 4.0, 30.0}) {
        const std::size_t rows = 2 * kFloatLaneRows + 3;
        Rows z = random_normal(rows * n, 1000 * n + static_cast<unsigned>(sigma), sigma);
        for (std::size_t i = 5; i < z.size() && n > 1; i += 7) z[i] = kMasked;
        for (std::size_t r = 0; r < rows; ++r) z[r * n] = 0.5 * sigma;   // no row all masked
        std::string where;
        const double w = float_vs_double(spec, z, rows, n, &where);
        overall = std::max(overall, w);
        ASSERT_LE(w, 4.0) << where << " sigma " << sigma;
      }
    }
  }
  std::printf("float lane rows: worst %.2f float ulps\n", overall);
}

// Extreme logits: large offsets (the fused reference; 1e30 is beyond the float lanes' range and goes
// row by row), weights spanning the whole float range, a spike, a single unmasked entry.
TEST(SoftmaxLanes, FloatExtremeLogitsWithinFourUlps) {
  for (const char* spec : kLaneSpecs) {
    for (std::size_t n : {3, 16, 37, 64}) {
      const std::size_t rows = kFloatLaneRows + 1;
      for (double offset : {0.0, 1e4, -3e4, 1e30}) {
        Rows z = random_normal(rows * n, 77 + n, 2.0);
        for (double& x : z) x += offset;
        std::string where;
        EXPECT_LE(float_vs_double(spec, z, rows, n, &where), 4.0) << where << " offset " << offset;
      }
      Rows wide(rows * n), spike = random_normal(rows * n, 5 + n, 1.0), single(rows * n, kMasked);
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t i = 0; i < n; ++i) wide[r * n + i] = -(90.0 / static_cast<double>(n)) * static_cast<double>((i * 7 + r) % n);
        spike[r * n + (r % n)] += 60.0;
        single[r * n + (r * 3) % n] = static_cast<double>(r);
      }
      std::string where;
      EXPECT_LE(float_vs_double(spec, wide, rows, n, &where), 4.0) << where;   // weights down to e^-90
      EXPECT_LE(float_vs_double(spec, spike, rows, n, &where), 4.0) << where;
      EXPECT_LE(float_vs_double(spec, single, rows, n, &where), 4.0) << where;
    }
  }
}

// Adaptive rows whose entropy at beta = 1 lies just below and above 0.8486, where beta leaves 1 (the
// other kink, 5.9445, is beyond ln 64: no row of the lane kernel reaches it): one entry a above
// n - 1 equal ones, a found by bisection for each target entropy.
TEST(SoftmaxLanes, FloatAdaptiveAcrossTheKinkWithinFourUlps) {
  auto entropy_of = [](double a, std::size_t n) {
    Rows z(n, 0.0);
    z[0] = a;
    return static_cast<double>(entropy(reference_softmax(z.data(), n, 1.0L)));
  };
  for (std::size_t n : {4, 16, 50}) {
    const std::size_t rows = kFloatLaneRows;
    Rows z(rows * n, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
      const double target = 0.8486 + (static_cast<double>(r) - 3.5) * 2e-3;
      double lo = 0.0, hi = 60.0;   // entropy falls as a grows
      for (int it = 0; it < 200; ++it) {
        const double mid = 0.5 * (lo + hi);
        (entropy_of(mid, n) > target ? lo : hi) = mid;
      }
      const Rows noise = random_normal(n, 300 + r, 1e-3);
      for (std::size_t i = 0; i < n; ++i) z[r * n + i] = (i == 0 ? lo : 0.0) + noise[i];
    }
    std::string where;
    EXPECT_LE(float_vs_double("adaptive", z, rows, n, &where), 4.0) << where;
  }
}

// A group whose rows differ in status: NaN, +inf, all masked, beyond the float lanes' range (1e30),
// good. forward names the lowest bad row; without the bad rows every other row's bits equal those it
// gets alone, and a row beyond range gets the row kernel's result.
TEST(SoftmaxLanes, FloatGroupWithBadAndOutOfRangeRows) {
  const std::size_t n = 16, rows = 2 * kFloatLaneRows;
  for (const char* spec : {"softmax", "adaptive"}) {
    const auto nz = make_normaliser(spec);
    Rows z0 = random_normal(rows * n, 21, 3.0);
    for (std::size_t i = 0; i < n; ++i) z0[2 * n + i] += 1e30;   // row 2: out of range
    std::vector<float> z(z0.begin(), z0.end()), p(z.size());
    std::vector<float> bad = z;
    bad[5 * n + 3] = NAN;
    bad[9 * n + 1] = INFINITY;
    for (std::size_t i = 0; i < n; ++i) bad[11 * n + i] = -INFINITY;
    try {
      nz->forward(bad.data(), p.data(), rows, n);
      FAIL() << spec << ": no error";
    } catch (const sharp::NumericError& e) {
      EXPECT_NE(std::string(e.what()).find("row 5:"), std::string::npos) << e.what();
    }
    // Good rows beside bad ones: the group goes row by row, each row alone in the lane kernel.
    for (std::size_t bad_row : {std::size_t{5}, std::size_t{9}, std::size_t{11}}) {
      std::vector<float> zb = z, pb(z.size());
      std::copy(bad.begin() + bad_row * n, bad.begin() + (bad_row + 1) * n, zb.begin() + bad_row * n);
      EXPECT_THROW(nz->forward(zb.data(), pb.data(), rows, n), sharp::NumericError);
    }
    nz->forward(z.data(), p.data(), rows, n);
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<float> alone(n);
      nz->forward(z.data() + r * n, alone.data(), 1, n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(alone[i], p[r * n + i]) << spec << " row " << r << " entry " << i;
    }
    Rows zd(z.begin() + 2 * n, z.begin() + 3 * n), pd(n);
    nz->forward(zd.data(), pd.data(), 1, n);   // beyond range: the row kernel, within 4 ulp of double
    EXPECT_LE(sharp::test::worst_float_ulps(p.data() + 2 * n, pd.data(), n), 4.0) << spec;
  }
}

// Lanes compute their float rows on their own: a row's bits do not depend on its neighbours, on its
// place in a group of 8, or on the batch size.
TEST(SoftmaxLanes, FloatRowIndependentOfItsNeighbours) {
  const std::size_t n = 16, rows = 19;
  const Rows z0 = random_normal(rows * n, 8, 4.0);
  const std::vector<float> z(z0.begin(), z0.end());
  for (const char* spec : {"softmax", "adaptive"}) {
    const auto nz = make_normaliser(spec);
    std::vector<float> all(rows * n);
    nz->forward(z.data(), all.data(), rows, n);
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<float> alone(n);
      nz->forward(z.data() + r * n, alone.data(), 1, n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(alone[i], all[r * n + i]) << spec << " row " << r;
    }
  }
}

}  // namespace

// The short-row lane kernel (normalisers/softmax_lanes.hpp), which Normaliser::forward uses (AVX2) for
// softmax and adaptive rows of at most 64 entries: the shuffle transpose against the lane-by-lane
// one; every row against long double (softmax at several beta, adaptive at its own beta), with
// masked entries, widths that leave a partial column block, and row counts that leave a partial
// group; a row's result independent of the rows beside it (bit for bit); float against double;
// a bad row named by forward.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/random_rows.hpp"

#include "core/errors.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/softmax_lanes.hpp"

namespace {

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

}  // namespace

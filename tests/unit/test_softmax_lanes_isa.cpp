// The lane-group kernels built for AVX2 and for AVX-512 (normalisers/simd/softmax_lanes_impl.hpp) give
// the same bits: the same rows through isa_avx2:: and isa_avx512::float_lane_groups and
// double_lane_groups, every
// length 1..64, several betas and adaptive, masked entries, large offsets (near and beyond the float
// lanes' range), a partial last group, and bad groups (all masked, NaN, +inf) flagged alike.
// Skipped (with a message) on a CPU without AVX-512.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/simd_isa.hpp"
#include "normalisers/simd/softmax_lanes.hpp"
#include "support/random_rows.hpp"

namespace {

using namespace sharp::norm;

constexpr double kInf = std::numeric_limits<double>::infinity();

// rows x n logits (row-major, from doubles) as T through both builds, groups [0, ceil(rows / G)): the
// same bad flags, and where a group is good, the same bits of its rows. Returns the bad-group count.
template <class T>
std::size_t expect_same_as(const std::vector<double>& logits, std::size_t rows, std::size_t n, double beta,
                           bool adaptive, const std::string& what_rows) {
  constexpr std::size_t G = kLaneRowsOf<T>;
  const std::string what = what_rows + (sizeof(T) == 4 ? " float" : " double");
  const std::vector<T> z(logits.begin(), logits.end());
  const std::size_t groups = (rows + G - 1) / G;
  std::vector<T> p2(z.size(), T(-1)), p5(z.size(), T(-2));
  std::vector<unsigned char> bad2(groups, 7), bad5(groups, 9);
  if constexpr (sizeof(T) == 4) {
    isa_avx2::float_lane_groups(z.data(), p2.data(), rows, n, 0, groups, beta, adaptive, bad2.data());
    isa_avx512::float_lane_groups(z.data(), p5.data(), rows, n, 0, groups, beta, adaptive, bad5.data());
  } else {
    isa_avx2::double_lane_groups(z.data(), p2.data(), rows, n, 0, groups, beta, adaptive, bad2.data());
    isa_avx512::double_lane_groups(z.data(), p5.data(), rows, n, 0, groups, beta, adaptive, bad5.data());
  }
  std::size_t bad = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    EXPECT_EQ(bad2[g], bad5[g]) << what << " group " << g;
    if (bad2[g] != 0 || bad5[g] != 0) {
      ++bad;
      continue;
    }
    const std::size_t begin = g * G * n, end = std::min(rows, (g + 1) * G) * n;
    EXPECT_EQ(std::memcmp(p2.data() + begin, p5.data() + begin, (end - begin) * sizeof(T)), 0) << what << " group " << g;
  }
  return bad;
}

// Float rows: the bad-group count (float groups of 8); double rows checked alike (their groups of 4
// are bad exactly where a row is bad, not for the float range).
std::size_t expect_same(const std::vector<double>& logits, std::size_t rows, std::size_t n, double beta, bool adaptive,
                        const std::string& what) {
  expect_same_as<double>(logits, rows, n, beta, adaptive, what);
  return expect_same_as<float>(logits, rows, n, beta, adaptive, what);
}

#define SKIP_WITHOUT_AVX512() \
  if (!sharp::cpu_has_avx512()) GTEST_SKIP() << "this CPU lacks AVX-512: only the AVX2 build can run here"

TEST(SoftmaxLanesIsa, SameBitsEveryLength) {
  SKIP_WITHOUT_AVX512();
  std::uint64_t seed = 11;
  const std::size_t rows = 19;   // two full groups and a partial one
  for (std::size_t n = 1; n <= kLaneRowLongest; ++n) {
    for (double sigma : {1.0, 6.0}) {
      std::vector<double> z = sharp::test::random_normal(rows * n, seed++, sigma);
      // Masked entries, but never a whole row (each row's first entry is kept finite).
      for (std::size_t i = 5; i < z.size(); i += 7) z[i] = -kInf;
      for (std::size_t r = 0; r < rows; ++r) z[r * n] = std::isinf(z[r * n]) ? 0.0 : z[r * n];
      const std::string what = "n " + std::to_string(n) + " sigma " + std::to_string(sigma);
      for (double beta : {1.0, 0.3, 4.0}) EXPECT_EQ(expect_same(z, rows, n, beta, false, what + " beta " + std::to_string(beta)), 0u);
      EXPECT_EQ(expect_same(z, rows, n, 1.0, true, what + " adaptive"), 0u);
    }
  }
}

TEST(SoftmaxLanesIsa, SameBitsOnExtremeRows) {
  SKIP_WITHOUT_AVX512();
  const std::size_t rows = 13, n = 16;
  for (double offset : {-1e4, 1e4, 9e4, 1e5, 1e20}) {   // 1e5 · log2 e > 2^17: beyond the float lanes' range
    std::vector<double> z = sharp::test::random_normal(rows * n, 21, 2.0);
    for (double& x : z) x += offset;
    const std::string what = "offset " + std::to_string(offset);
    const std::size_t bad = expect_same(z, rows, n, 1.0, false, what);
    EXPECT_EQ(bad, std::abs(offset) >= 1e5 ? 2u : 0u) << what;   // the test can fail: the range check is seen
    expect_same(z, rows, n, 1.0, true, what + " adaptive");
  }
  for (double beta : {1e-40, 1e40}) {   // beta log2 e outside [2^-100, 2^100]: every group bad
    const std::vector<double> z = sharp::test::random_normal(rows * n, 22, 1.0);
    EXPECT_EQ(expect_same(z, rows, n, beta, false, "beta " + std::to_string(beta)), 2u);
  }
  // Bad rows in group 0 (all masked), group 1 (NaN), and +inf in the partial group 2 of 21 rows.
  std::vector<double> z = sharp::test::random_normal(21 * n, 23, 1.0);
  for (std::size_t j = 0; j < n; ++j) z[3 * n + j] = -kInf;
  z[10 * n + 4] = std::numeric_limits<double>::quiet_NaN();
  z[20 * n + 7] = kInf;
  for (bool adaptive : {false, true}) EXPECT_EQ(expect_same(z, 21, n, 1.0, adaptive, "bad rows"), 3u);
  // Good groups around a bad one keep their bits.
  z = sharp::test::random_normal(24 * n, 24, 1.0);
  z[9 * n + 2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(expect_same(z, 24, n, 1.0, false, "one bad group of three"), 1u);
}

}  // namespace

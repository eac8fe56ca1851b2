// The softmax family's block kernels built for AVX2 and for AVX-512 (normalisers/simd/softmax_block.hpp)
// give the same bits: sums, weighted sums, maxima, residuals and stored terms, for double and float
// rows of every length up to a block, masked entries, spikes above the reference estimate (the
// redo), large offsets (fused shift, double-lanes fallback) and NaN. Also SHARP_SIMD's parsing.
// Skipped (with a message) on a CPU without AVX-512.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/simd_isa.hpp"
#include "normalisers/simd/softmax_block.hpp"
#include "support/random_rows.hpp"

namespace {

using namespace sharp::norm;

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}
bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

template <class T, bool kStore, FloatLanes kLanes>
void expect_same(const std::vector<double>& row, double beta, const std::string& what) {
  const std::vector<T> z(row.begin(), row.end());
  std::vector<T> p2(z.size(), T(-1)), p5(z.size(), T(-1));
  const BlockResult a = isa_avx2::block<T, kStore, kLanes>(z.data(), kStore ? p2.data() : nullptr, z.size(), beta);
  const BlockResult b = isa_avx512::block<T, kStore, kLanes>(z.data(), kStore ? p5.data() : nullptr, z.size(), beta);
  const std::string where = what + (sizeof(T) == 4 ? " float" : " double") + (kStore ? " store" : "") +
                            " lanes " + std::to_string(static_cast<int>(kLanes));
  EXPECT_TRUE(same_bits(a.stats.sum, b.stats.sum)) << where << ": " << a.stats.sum << " vs " << b.stats.sum;
  EXPECT_TRUE(same_bits(a.stats.weighted, b.stats.weighted)) << where;
  EXPECT_TRUE(same_bits(a.stats.shift, b.stats.shift)) << where;
  EXPECT_TRUE(same_bits(a.stats.max, b.stats.max) || (std::isnan(a.stats.max) && std::isnan(b.stats.max))) << where;
  EXPECT_TRUE(same_bits(a.stored_log2, b.stored_log2)) << where;
  EXPECT_EQ(a.bad, b.bad) << where;
  EXPECT_TRUE(same_bits(p2, p5)) << where;
}

void expect_all_same(const std::vector<double>& row, double beta, const std::string& what) {
  expect_same<double, false, FloatLanes::kWeighted>(row, beta, what);
  expect_same<double, true, FloatLanes::kWeighted>(row, beta, what);
  expect_same<float, false, FloatLanes::kTwelveDigits>(row, beta, what);
  expect_same<float, true, FloatLanes::kTwelveDigits>(row, beta, what);
  expect_same<float, false, FloatLanes::kSumOnly>(row, beta, what);
  expect_same<float, true, FloatLanes::kSumOnly>(row, beta, what);
  expect_same<float, false, FloatLanes::kWeighted>(row, beta, what);
  expect_same<float, true, FloatLanes::kWeighted>(row, beta, what);
}

#define SKIP_WITHOUT_AVX512() \
  if (!sharp::cpu_has_avx512()) GTEST_SKIP() << "this CPU lacks AVX-512: only the AVX2 build can run here"

TEST(BlockKernelsIsa, SameBitsOnRandomRows) {
  SKIP_WITHOUT_AVX512();
  std::uint64_t seed = 5;
  for (std::size_t n : {1, 7, 8, 15, 16, 17, 31, 100, 255, 256, 257, 1000, 2047, 2048}) {
    for (double beta : {1.0, 0.3, 4.0}) {
      const std::string what = "n " + std::to_string(n) + " beta " + std::to_string(beta);
      expect_all_same(sharp::test::random_normal(n, seed++, 3.0), beta, what);
    }
  }
}

TEST(BlockKernelsIsa, SameBitsOnExtremeRows) {
  SKIP_WITHOUT_AVX512();
  const double inf = std::numeric_limits<double>::infinity();
  for (double offset : {0.0, 1e4, 1e7, 1e20}) {
    std::vector<double> z = sharp::test::random_normal(1500, 77, 1.0);
    z[700] += 300.0;                                       // far above the first entries: the redo
    for (std::size_t i = 3; i < z.size(); i += 5) z[i] = -inf;   // masked
    for (double& x : z) x += offset;
    expect_all_same(z, 1.0, "offset " + std::to_string(offset));
  }
  std::vector<double> masked(300, -inf);
  expect_all_same(masked, 1.0, "all masked");
  std::vector<double> nan = sharp::test::random_normal(300, 78, 1.0);
  nan[123] = std::numeric_limits<double>::quiet_NaN();
  expect_all_same(nan, 1.0, "NaN");
}

TEST(SimdIsa, SettingIsParsed) {
  EXPECT_EQ(sharp::choose_simd_isa("avx2"), sharp::SimdIsa::Avx2);
  EXPECT_EQ(sharp::choose_simd_isa(nullptr), sharp::choose_simd_isa("auto"));
  EXPECT_EQ(sharp::choose_simd_isa(""), sharp::choose_simd_isa("auto"));
  EXPECT_EQ(sharp::choose_simd_isa("auto"), sharp::cpu_has_avx512() ? sharp::SimdIsa::Avx512 : sharp::SimdIsa::Avx2);
  EXPECT_THROW(sharp::choose_simd_isa("sse2"), sharp::BadInput);
  EXPECT_THROW(sharp::choose_simd_isa("AVX2"), sharp::BadInput);
  if (sharp::cpu_has_avx512()) {
    EXPECT_EQ(sharp::choose_simd_isa("avx512"), sharp::SimdIsa::Avx512);
  } else {
    EXPECT_THROW(sharp::choose_simd_isa("avx512"), sharp::BadInput);
  }
}

}  // namespace

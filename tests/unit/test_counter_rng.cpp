// Counter-based RNG: fills are bit-identical to the scalar functions at any offset and length,
// streams are pure functions of (key, index), the marginals pass mean/variance/KS/chi-square
// checks, and different keys (and child keys) give unrelated streams.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <unordered_set>
#include <vector>

#include "rng/counter_rng.hpp"

namespace {

using namespace sharp::rng;

const std::vector<std::uint64_t> kFirsts{0, 1, 2, 3, 5, 7, 1000001, (std::uint64_t{1} << 40) + 3};
const std::vector<std::size_t> kCounts{0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 33, 1000};

// Kolmogorov–Smirnov statistic of a sample against a continuous CDF.
template <class Cdf>
double ks_statistic(std::vector<double> x, Cdf cdf) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, f - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - f});
  }
  return d;
}

double mean_of(const std::vector<double>& x) {
  double s = 0.0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

double variance_of(const std::vector<double>& x) {
  const double m = mean_of(x);
  double s = 0.0;
  for (double v : x) s += (v - m) * (v - m);
  return s / static_cast<double>(x.size() - 1);
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const double ma = mean_of(a), mb = mean_of(b);
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

constexpr std::size_t kDraws = 1000000;
// Critical KS distance at the 0.1% level for kDraws samples (1.949/sqrt(N)).
const double kKsCritical = 1.949 / std::sqrt(static_cast<double>(kDraws));

TEST(CounterRng, PinnedValuesNeverChange) {
  // Streams define results on disk (keys come from point parameters): these must not change.
  EXPECT_EQ(bits(0, 0), 0x184c6c53fb60892dULL);
  EXPECT_EQ(bits(1, 12345), 0x15a8f24a6ba6a8a4ULL);
  EXPECT_EQ(bits(0xdeadbeefULL, std::uint64_t{1} << 40), 0x48345d324f870d2eULL);
  EXPECT_EQ(uniform(42, 7), 0x1.e18e96b19177p-3);
  EXPECT_EQ(child_key(5, 3), 0xebd7d2f9aff4368eULL);
  // Normals go through log/sin/cos, whose last bit may differ between instruction sets.
  EXPECT_NEAR(normal(42, 0), 0x1.52ca58efafa19p-1, 1e-15);
  EXPECT_NEAR(normal(42, 1), -0x1.942f0c95bd2cdp-1, 1e-15);
  EXPECT_NEAR(normal(42, 1001), 0x1.45894a72006b7p-2, 1e-15);
}

TEST(CounterRng, FillBitsMatchesScalarAtAnyOffsetAndLength) {
  for (std::uint64_t first : kFirsts) {
    for (std::size_t count : kCounts) {
      std::vector<std::uint64_t> out(count + 1, 0xabababababababab);
      fill_bits(99, first, out.data(), count);
      for (std::size_t j = 0; j < count; ++j) ASSERT_EQ(out[j], bits(99, first + j)) << first << " " << j;
      EXPECT_EQ(out[count], 0xabababababababab) << "wrote past the end";
    }
  }
}

TEST(CounterRng, FillUniformIsBitIdenticalToScalar) {
  for (std::uint64_t first : kFirsts) {
    for (std::size_t count : kCounts) {
      std::vector<double> out(count + 1, -1.0);
      fill_uniform(7, first, out.data(), count);
      for (std::size_t j = 0; j < count; ++j) {
        const double expected = uniform(7, first + j);
        ASSERT_EQ(std::memcmp(&out[j], &expected, sizeof(double)), 0) << first << " " << j;
      }
      EXPECT_EQ(out[count], -1.0) << "wrote past the end";
    }
  }
}

TEST(CounterRng, FillNormalIsBitIdenticalToScalar) {
  for (std::uint64_t first : kFirsts) {
    for (std::size_t count : kCounts) {
      std::vector<double> out(count + 1, -1.0);
      fill_normal(11, first, out.data(), count);
      for (std::size_t j = 0; j < count; ++j) {
        const double expected = normal(11, first + j);
        ASSERT_EQ(std::memcmp(&out[j], &expected, sizeof(double)), 0) << first << " " << j;
      }
      EXPECT_EQ(out[count], -1.0) << "wrote past the end";
    }
  }
}

TEST(CounterRng, ChunkedFillsEqualOneFill) {
  const std::size_t n = 5003;
  std::vector<double> whole(n), pieces(n), normals(n), normal_pieces(n);
  fill_uniform(3, 17, whole.data(), n);
  fill_normal(3, 17, normals.data(), n);
  for (std::size_t pos = 0, len = 1; pos < n; pos += len, len = len * 3 + 1) {
    const std::size_t m = std::min(len, n - pos);
    fill_uniform(3, 17 + pos, pieces.data() + pos, m);
    fill_normal(3, 17 + pos, normal_pieces.data() + pos, m);
  }
  EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), n * sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(normals.data(), normal_pieces.data(), n * sizeof(double)), 0);
}

TEST(CounterRng, UniformMarginal) {
  std::vector<double> u(kDraws);
  fill_uniform(2024, 0, u.data(), kDraws);
  EXPECT_GE(*std::min_element(u.begin(), u.end()), 0.0);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 1.0);
  const double n = static_cast<double>(kDraws);
  EXPECT_NEAR(mean_of(u), 0.5, 5.0 * std::sqrt(1.0 / 12.0 / n));
  EXPECT_NEAR(variance_of(u), 1.0 / 12.0, 5.0 * std::sqrt(1.0 / 180.0 / n));  // Var of (U−1/2)² is 1/180
  EXPECT_LT(ks_statistic(u, [](double x) { return x; }), kKsCritical);
  // Chi-square over 100 equal bins: 99 degrees of freedom, 0.1% critical value 148.2.
  std::vector<double> bins(100, 0.0);
  for (double v : u) bins[static_cast<std::size_t>(v * 100.0)] += 1.0;
  double chi2 = 0.0;
  for (double b : bins) chi2 += (b - n / 100.0) * (b - n / 100.0) / (n / 100.0);
  EXPECT_LT(chi2, 148.2);
}

TEST(CounterRng, EveryBitIsFair) {
  std::vector<std::uint64_t> b(kDraws);
  fill_bits(5, 0, b.data(), kDraws);
  for (int bit = 0; bit < 64; ++bit) {
    std::size_t ones = 0;
    for (std::uint64_t v : b) ones += (v >> bit) & 1;
    EXPECT_NEAR(static_cast<double>(ones) / kDraws, 0.5, 5.0 * 0.5 / std::sqrt(static_cast<double>(kDraws)))
        << "bit " << bit;
  }
}

TEST(CounterRng, NormalMarginal) {
  std::vector<double> x(kDraws);
  fill_normal(2024, 0, x.data(), kDraws);
  const double n = static_cast<double>(kDraws);
  EXPECT_NEAR(mean_of(x), 0.0, 5.0 / std::sqrt(n));
  EXPECT_NEAR(variance_of(x), 1.0, 5.0 * std::sqrt(2.0 / n));
  double m3 = 0, m4 = 0;
  for (double v : x) {
    m3 += v * v * v;
    m4 += v * v * v * v;
  }
  EXPECT_NEAR(m3 / n, 0.0, 5.0 * std::sqrt(15.0 / n));         // skewness (Var of x³ is 15)
  EXPECT_NEAR(m4 / n, 3.0, 5.0 * std::sqrt(96.0 / n));         // kurtosis (Var of x⁴ is 96)
  EXPECT_LT(ks_statistic(x, [](double v) { return 0.5 * std::erfc(-v / std::sqrt(2.0)); }), kKsCritical);
  EXPECT_LT(*std::max_element(x.begin(), x.end()), 8.5);
  EXPECT_GT(*std::min_element(x.begin(), x.end()), -8.5);
  // The two normals of a Box–Muller pair are independent: their correlation is ~ N(0, 1/N).
  std::vector<double> even(kDraws / 2), odd(kDraws / 2);
  for (std::size_t i = 0; i < kDraws / 2; ++i) {
    even[i] = x[2 * i];
    odd[i] = x[2 * i + 1];
  }
  EXPECT_LT(std::fabs(correlation(even, odd)), 5.0 / std::sqrt(n / 2));
  // Squares too (Box–Muller pairs share a radius, so this checks the angle is uniform).
  for (auto& v : even) v *= v;
  for (auto& v : odd) v *= v;
  EXPECT_LT(std::fabs(correlation(even, odd)), 5.0 / std::sqrt(n / 2));
}

TEST(CounterRng, DifferentKeysGiveUnrelatedStreams) {
  const std::size_t n = 200000;
  std::vector<double> a(n), b(n), c(n);
  fill_uniform(0, 0, a.data(), n);
  fill_uniform(1, 0, b.data(), n);  // adjacent keys
  fill_uniform(std::uint64_t{1} << 63, 0, c.data(), n);
  EXPECT_LT(std::fabs(correlation(a, b)), 5.0 / std::sqrt(static_cast<double>(n)));
  EXPECT_LT(std::fabs(correlation(a, c)), 5.0 / std::sqrt(static_cast<double>(n)));
  // No stream is a shifted copy of another: none of key k's first values appear among key 0's.
  std::vector<std::uint64_t> base(1 << 20);
  fill_bits(0, 0, base.data(), base.size());
  const std::unordered_set<std::uint64_t> seen(base.begin(), base.end());
  for (std::uint64_t key = 1; key <= 64; ++key) {
    std::vector<std::uint64_t> other(64);
    fill_bits(key, 0, other.data(), other.size());
    for (std::uint64_t v : other) ASSERT_EQ(seen.count(v), 0u) << "key " << key;
  }
}

TEST(CounterRng, ChildKeysDiffer) {
  std::set<std::uint64_t> keys;
  for (std::uint64_t parent = 0; parent < 10; ++parent) {
    keys.insert(parent);
    for (std::uint64_t label = 0; label < 1000; ++label) keys.insert(child_key(parent, label));
  }
  EXPECT_EQ(keys.size(), 10u + 10u * 1000u);
  EXPECT_NE(child_key(1, 2), child_key(2, 1));
  // Child streams are unrelated to their parent and to each other.
  const std::size_t n = 100000;
  std::vector<double> parent(n), first_child(n), second_child(n);
  fill_uniform(9, 0, parent.data(), n);
  fill_uniform(child_key(9, 0), 0, first_child.data(), n);
  fill_uniform(child_key(9, 1), 0, second_child.data(), n);
  EXPECT_LT(std::fabs(correlation(parent, first_child)), 5.0 / std::sqrt(static_cast<double>(n)));
  EXPECT_LT(std::fabs(correlation(first_child, second_child)), 5.0 / std::sqrt(static_cast<double>(n)));
}

TEST(CounterRng, NormalsAreIndependentOfTheKeysUniforms) {
  const std::size_t n = 200000;
  std::vector<double> u(n), x(n);
  fill_uniform(77, 0, u.data(), n);
  fill_normal(77, 0, x.data(), n);
  EXPECT_LT(std::fabs(correlation(u, x)), 5.0 / std::sqrt(static_cast<double>(n)));
}

}  // namespace

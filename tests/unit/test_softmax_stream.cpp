// SoftmaxStream against a direct two-pass computation in long double, on random rows of many
// lengths and scales (including ±1e30 and rows shifted by 1e6), masked (−inf) entries, chunked and
// merged accumulation, and the errors it must raise. (Its exp: tests/unit/test_simd_exp.cpp.)
#include <gtest/gtest.h>

#include "support/random_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/errors.hpp"
#include "rng/counter_rng.hpp"
#include "normalisers/softmax_stream.hpp"

namespace {

using sharp::norm::SoftmaxStream;
using sharp::test::random_uniform;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Reference {
  long double max, sum, log_sum_exp, entropy;
};

// Two passes in long double: max, then s = Σ e^(z−max) and H = −Σ p ln p.
Reference reference(const std::vector<double>& z) {
  Reference r{};
  r.max = -INFINITY;
  for (double v : z) r.max = std::max<long double>(r.max, v);
  long double s = 0, t = 0;
  for (double v : z) {
    if (v == -kInf) continue;
    const long double d = static_cast<long double>(v) - r.max;
    const long double w = std::exp(d);
    s += w;
    t += d * w;
  }
  r.sum = s;
  r.log_sum_exp = r.max + std::log(s);
  r.entropy = std::log(s) - t / s;
  return r;
}

double rel_err(long double got, long double want) {
  return static_cast<double>(std::fabs(got - want) / std::max<long double>(std::fabs(want), 1e-300L));
}

void expect_matches_reference(const SoftmaxStream& st, const std::vector<double>& z, double tol) {
  const Reference r = reference(z);
  EXPECT_EQ(st.max(), static_cast<double>(r.max));
  EXPECT_EQ(st.min, *std::min_element(z.begin(), z.end()));
  EXPECT_EQ(st.count, z.size());
  EXPECT_LT(rel_err(st.softmax.total_sum(), r.sum), tol);
  EXPECT_LT(rel_err(st.log_sum_exp(), r.log_sum_exp), tol);
  // Entropy may be ~0 (one dominant logit): compare absolutely below 1.
  EXPECT_LT(std::fabs(st.entropy() - r.entropy) / std::max<long double>(1.0L, r.entropy), tol);
}

TEST(SoftmaxStream, MatchesDirectComputationOnRandomRows) {
  const std::vector<std::size_t> lengths{1, 2, 3, 7, 100, 1023, 1024, 1025, 5000, 100003};
  const std::vector<std::pair<double, double>> scale_shift{
      {1.0, 0.0}, {10.0, 0.0}, {30.0, 5.0}, {1.0, 1e6}, {20.0, -1e6}, {1e-8, 3.0}, {1e30, 0.0}, {1e30, 1e30}};
  std::uint64_t key = 0;
  for (std::size_t n : lengths) {
    for (auto [scale, shift] : scale_shift) {
      const auto z = random_uniform(n, ++key, scale, shift);
      SoftmaxStream st;
      st.add(z.data(), z.size());
      SCOPED_TRACE(testing::Message() << "n=" << n << " scale=" << scale << " shift=" << shift);
      expect_matches_reference(st, z, 1e-13);
    }
  }
}

TEST(SoftmaxStream, ChunkedAtSubChunkMultiplesIsBitIdenticalToWhole) {
  const auto z = random_uniform(10 * SoftmaxStream::kSubChunk + 77, 5, 8.0, 1.0);
  SoftmaxStream whole, chunked;
  whole.add(z.data(), z.size());
  const std::size_t step = 3 * SoftmaxStream::kSubChunk;
  for (std::size_t pos = 0; pos < z.size(); pos += step) chunked.add(z.data() + pos, std::min(step, z.size() - pos));
  EXPECT_EQ(std::memcmp(&whole, &chunked, sizeof(SoftmaxStream)), 0);
}

TEST(SoftmaxStream, AnyChunkingAgreesToRounding) {
  const auto z = random_uniform(50000, 6, 8.0, 1.0);
  SoftmaxStream whole, chunked;
  whole.add(z.data(), z.size());
  for (std::size_t pos = 0, len = 1; pos < z.size(); pos += len, len = (len * 7 + 3) % 3001 + 1)
    chunked.add(z.data() + pos, std::min(len, z.size() - pos));
  EXPECT_EQ(whole.max(), chunked.max());
  EXPECT_EQ(whole.min, chunked.min);
  EXPECT_EQ(whole.count, chunked.count);
  EXPECT_LT(rel_err(chunked.softmax.total_sum(), whole.softmax.total_sum()), 1e-14);
  EXPECT_LT(rel_err(chunked.entropy(), whole.entropy()), 1e-14);
}

TEST(SoftmaxStream, MergeInFixedOrderIsDeterministicAndAccurate) {
  const auto z = random_uniform(40000, 7, 12.0, -3.0);
  // Parts with increasing, decreasing and equal maxima, merged in index order.
  const std::vector<std::size_t> cuts{0, 1, 999, 5000, 5001, 20000, 39999, 40000};
  auto merged = [&] {
    SoftmaxStream total;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      SoftmaxStream part;
      part.add(z.data() + cuts[i], cuts[i + 1] - cuts[i]);
      total.merge(part);
    }
    return total;
  };
  const SoftmaxStream a = merged(), b = merged();
  EXPECT_EQ(std::memcmp(&a, &b, sizeof(SoftmaxStream)), 0);
  expect_matches_reference(a, z, 1e-13);
  // Merging an empty stream changes nothing; merging into an empty stream copies.
  SoftmaxStream c = a;
  c.merge(SoftmaxStream{});
  EXPECT_EQ(std::memcmp(&a, &c, sizeof(SoftmaxStream)), 0);
  SoftmaxStream d;
  d.merge(a);
  EXPECT_EQ(std::memcmp(&a, &d, sizeof(SoftmaxStream)), 0);
}

// Float logits run in float lanes (the float exp, sums in double): float precision against the same
// logits widened to double, on rows with masked entries, spikes far above a sub-chunk's first
// entries, and large offsets (where the kernel falls back to double lanes); chunking at sub-chunk
// multiples keeps the bits; NaN and +inf throw and leave the stream unchanged.
TEST(SoftmaxStream, FloatLogitsWithinFloatPrecisionOfWidenedDoubles) {
  std::uint64_t key = 80;
  for (std::size_t n : {1, 7, 100, 1024, 3000, 70000}) {
    for (auto [scale, shift] : std::vector<std::pair<double, double>>{{6.0, 0.0}, {40.0, -3.0}, {1.0, 1e4}, {2.0, 1e30}}) {
      const auto z = random_uniform(n, ++key, scale, shift);
      std::vector<float> f(z.begin(), z.end());
      if (n > 500) f[300] += 150.0f;   // far above the first entries of its sub-chunk
      if (n > 2000) for (std::size_t i = 5; i < n; i += 9) f[i] = -std::numeric_limits<float>::infinity();
      const std::vector<double> widened(f.begin(), f.end());
      SoftmaxStream from_float, from_double;
      from_float.add(f.data(), f.size());
      from_double.add(widened.data(), widened.size());
      SCOPED_TRACE(testing::Message() << "n=" << n << " scale=" << scale << " shift=" << shift);
      EXPECT_EQ(from_float.max(), from_double.max());
      EXPECT_EQ(from_float.min, from_double.min);
      EXPECT_EQ(from_float.count, from_double.count);
      EXPECT_LT(rel_err(from_float.softmax.total_sum(), from_double.softmax.total_sum()), 1e-6);
      EXPECT_NEAR(from_float.log_sum_exp(), from_double.log_sum_exp(), 1e-7 * std::max(1.0, std::fabs(from_double.log_sum_exp())));
      EXPECT_NEAR(from_float.entropy(), from_double.entropy(), 1e-6 * std::max(1.0, from_double.entropy()));
    }
  }
  // Cut at sub-chunk multiples: the same bits as one call.
  const auto z = random_uniform(7 * SoftmaxStream::kSubChunk + 5, 90, 8.0, 1.0);
  const std::vector<float> f(z.begin(), z.end());
  SoftmaxStream whole, chunked;
  whole.add(f.data(), f.size());
  for (std::size_t pos = 0; pos < f.size(); pos += 2 * SoftmaxStream::kSubChunk)
    chunked.add(f.data() + pos, std::min(2 * SoftmaxStream::kSubChunk, f.size() - pos));
  EXPECT_EQ(std::memcmp(&whole, &chunked, sizeof(SoftmaxStream)), 0);
  // Errors: NaN (also among masked entries) and +inf throw, the stream stays as it was.
  for (std::size_t where : {std::size_t{0}, std::size_t{500}, std::size_t{1999}}) {
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      std::vector<float> g(2000, 0.5f);
      g[where] = bad;
      SoftmaxStream st = whole;
      EXPECT_THROW(st.add(g.data(), g.size()), sharp::NumericError) << where << " " << bad;
      std::vector<float> masked(2000, -std::numeric_limits<float>::infinity());
      masked[where] = bad;
      EXPECT_THROW(st.add(masked.data(), masked.size()), sharp::NumericError) << where << " " << bad;
      if (where < 1024) {
        EXPECT_EQ(std::memcmp(&st, &whole, sizeof(SoftmaxStream)), 0) << where;
      }
    }
  }
  // All masked: counted, no sums.
  const std::vector<float> none(3000, -std::numeric_limits<float>::infinity());
  SoftmaxStream masked;
  masked.add(none.data(), none.size());
  EXPECT_EQ(masked.count, none.size());
  EXPECT_EQ(masked.log_sum_exp(), -kInf);
  EXPECT_EQ(masked.min, -kInf);
}

TEST(SoftmaxStream, MaskedLogitsWeighNothing) {
  auto z = random_uniform(3000, 9, 5.0, 0.0);
  std::vector<double> kept;
  for (std::size_t i = 0; i < z.size(); ++i) {
    if (i % 3 == 0) z[i] = -kInf; else kept.push_back(z[i]);
  }
  SoftmaxStream masked, unmasked;
  masked.add(z.data(), z.size());
  unmasked.add(kept.data(), kept.size());
  EXPECT_EQ(masked.count, z.size());
  EXPECT_EQ(masked.min, -kInf);
  EXPECT_LT(rel_err(masked.softmax.total_sum(), unmasked.softmax.total_sum()), 1e-14);
  EXPECT_LT(rel_err(masked.entropy(), unmasked.entropy()), 1e-14);
  EXPECT_EQ(masked.probability(-kInf), 0.0);

  const std::vector<double> all_masked(2500, -kInf);
  SoftmaxStream none;
  none.add(all_masked.data(), all_masked.size());
  EXPECT_EQ(none.log_sum_exp(), -kInf);
  EXPECT_THROW(none.entropy(), sharp::NumericError);
  none.merge(unmasked);  // a masked prefix then real logits
  EXPECT_EQ(none.softmax.total_sum(), unmasked.softmax.total_sum());
  EXPECT_EQ(none.count, all_masked.size() + kept.size());
  EXPECT_THROW(SoftmaxStream{}.entropy(), sharp::NumericError);
}

// Logits far apart (any finite values are valid): a rise of the running maximum by more than the
// doubles span, or by 1e300 over many terms, makes the old part's factor 0; it must add exactly 0,
// not 0 * -inf = NaN.
TEST(SoftmaxStream, FarApartLogitsStayFinite) {
  const double low = -1e308, high = 1e308;
  SoftmaxStream rise;
  rise.add(&low, 1);
  rise.add(&high, 1);
  EXPECT_EQ(rise.log_sum_exp(), high);
  EXPECT_EQ(rise.entropy(), 0.0);
  SoftmaxStream low_first, high_first, low_later, high_later;
  low_first.add(&low, 1);
  high_later.add(&high, 1);
  low_first.merge(high_later);
  EXPECT_EQ(low_first.entropy(), 0.0);
  high_first.add(&high, 1);
  low_later.add(&low, 1);
  high_first.merge(low_later);
  EXPECT_EQ(high_first.entropy(), 0.0);
}

TEST(SoftmaxStream, NanAndPlusInfinityThrow) {
  for (std::size_t n : {1u, 5u, 64u, 2000u}) {
    for (std::size_t where : {std::size_t{0}, n / 2, n - 1}) {
      auto z = random_uniform(n, 10, 1.0, 0.0);
      z[where] = std::numeric_limits<double>::quiet_NaN();
      SoftmaxStream st;
      EXPECT_THROW(st.add(z.data(), n), sharp::NumericError) << n << " " << where;
      z[where] = kInf;
      EXPECT_THROW(st.add(z.data(), n), sharp::NumericError) << n << " " << where;
      std::vector<double> masked_nan(n, -kInf);
      masked_nan[where] = std::numeric_limits<double>::quiet_NaN();
      EXPECT_THROW(st.add(masked_nan.data(), n), sharp::NumericError) << n << " " << where;
    }
  }
}

TEST(SoftmaxStream, SortedRowsRescaleOftenAndStayAccurate) {
  // Ascending logits raise the maximum in every sub-chunk: the worst case for rescaling.
  const std::size_t n = std::size_t{1} << 20;
  std::vector<double> up(n), down(n);
  for (std::size_t i = 0; i < n; ++i) {
    up[i] = -20.0 + 40.0 * static_cast<double>(i) / n;
    down[n - 1 - i] = up[i];
  }
  SoftmaxStream a, b;
  a.add(up.data(), n);
  b.add(down.data(), n);
  expect_matches_reference(a, up, 1e-12);
  expect_matches_reference(b, down, 1e-13);
}

TEST(SoftmaxStream, LongConstantRowIsExact) {
  // 2^22 equal logits: every weight is exactly 1, so s = n and H = ln n exactly as doubles allow.
  const std::size_t n = std::size_t{1} << 22;
  const std::vector<double> z(n, 0.25);
  SoftmaxStream st;
  st.add(z.data(), n);
  EXPECT_EQ(st.softmax.total_sum(), static_cast<double>(n));
  EXPECT_DOUBLE_EQ(st.entropy(), std::log(static_cast<double>(n)));
  EXPECT_DOUBLE_EQ(st.probability(0.25), 1.0 / n);
}

}  // namespace

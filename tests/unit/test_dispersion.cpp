// The dispersion kernel (docs/science.md#dispersion-lemma): logit laws, their SIMD-lane form against the stored form,
// the split uniform draws against the RNG, the pipelined uniform pass against the plain one, the
// streamed row statistics against a direct computation that holds every logit (also on the
// two-pass path above δ/θ = 600), thread-count independence, the one-hot worst case up to n = 2^30
// with bounded memory, the lemma's bounds and their closed forms.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <vector>

#include "core/errors.hpp"
#include "dispersion/block_pass.hpp"
#include "dispersion/dispersion_row.hpp"
#include "dispersion/logit_lanes.hpp"
#include "dispersion/uniform_draws.hpp"
#include "rng/counter_rng.hpp"

namespace {

using namespace sharp::dispersion;
namespace lanes = sharp::dispersion::lanes;
const std::vector<LogitLaw> kLaws{LogitLaw::Uniform, LogitLaw::OneHot, LogitLaw::TwoPoint, LogitLaw::Gaussian};

double rel_err(long double got, long double want) {
  return static_cast<double>(std::fabs(got - want) / std::fabs(want));
}

std::vector<double> all_logits(LogitLaw law, std::uint64_t n, double spread, std::uint64_t key) {
  std::vector<double> e(n);
  generate_logits(law, spread, n, key, 0, e.data(), n);
  return e;
}

struct Direct {
  long double alpha_max, alpha_min, entropy;
};

// softmax_θ(e) held whole, in long double.
Direct direct(const std::vector<double>& e, double theta) {
  long double zmax = -INFINITY, zmin = INFINITY;
  for (double v : e) {
    zmax = std::max(zmax, static_cast<long double>(v) / theta);
    zmin = std::min(zmin, static_cast<long double>(v) / theta);
  }
  long double s = 0, t = 0;
  for (double v : e) {
    const long double d = static_cast<long double>(v) / theta - zmax;
    s += std::exp(d);
    t += d * std::exp(d);
  }
  return {1.0L / s, std::exp(zmin - zmax) / s, std::log(s) - t / s};
}

TEST(LogitLaws, NamesRoundTripAndBadNamesThrow) {
  ASSERT_EQ(logit_law_names().size(), kLaws.size());
  for (std::size_t i = 0; i < kLaws.size(); ++i) {
    EXPECT_EQ(logit_law_name(kLaws[i]), logit_law_names()[i]);
    EXPECT_EQ(parse_logit_law(logit_law_names()[i]), kLaws[i]);
  }
  try {
    parse_logit_law("cauchy");
    FAIL() << "no exception";
  } catch (const sharp::BadInput& e) {
    EXPECT_STREQ(e.what(), "unknown logit law 'cauchy' (allowed: uniform, one-hot, two-point, gaussian)");
  }
}

TEST(LogitLaws, ChunksAtAnyOffsetEqualTheWholeRow) {
  const std::uint64_t n = 10007;
  for (LogitLaw law : kLaws) {
    const auto whole = all_logits(law, n, 3.0, 21);
    std::vector<double> pieces(n);
    for (std::uint64_t first = 0, len = 1; first < n; first += len, len = len * 2 + 1) {
      const std::uint64_t m = std::min(len, n - first);
      generate_logits(law, 3.0, n, 21, first, pieces.data() + first, m);
    }
    EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), n * sizeof(double)), 0) << logit_law_name(law);
    // Scaled generation is the same bits as generating, then multiplying.
    std::vector<double> scaled(n);
    generate_scaled_logits(law, 3.0, n, 21, 0, 1.0 / 3.0, scaled.data(), n);
    for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(scaled[i], whole[i] * (1.0 / 3.0)) << i;
  }
}

TEST(LogitLaws, ValuesFollowTheirLaw) {
  const std::uint64_t n = 200000;
  const double spread = 2.0;
  for (LogitLaw law : kLaws) {
    const auto e = all_logits(law, n, spread, 5);
    double sum = 0;
    for (double v : e) {
      ASSERT_GE(v, 0.0);
      ASSERT_LE(v, spread);
      sum += v;
    }
    const double mean = sum / n;
    switch (law) {
      case LogitLaw::Uniform:
        EXPECT_NEAR(mean, spread / 2, 5 * spread / std::sqrt(12.0 * n));
        EXPECT_LT(*std::max_element(e.begin(), e.end()), spread);
        break;
      case LogitLaw::OneHot:
        EXPECT_EQ(e[0], spread);
        EXPECT_EQ(sum, spread);
        break;
      case LogitLaw::TwoPoint:
        EXPECT_EQ(e[0], spread);
        EXPECT_EQ(e[1], 0.0);
        for (double v : e) ASSERT_TRUE(v == 0.0 || v == spread);
        EXPECT_NEAR(mean, spread / 2, 5 * spread / (2 * std::sqrt(static_cast<double>(n))));
        break;
      case LogitLaw::Gaussian: {
        EXPECT_NEAR(mean, spread / 2, 5 * spread / (4 * std::sqrt(static_cast<double>(n))));
        const auto clipped = std::count_if(e.begin(), e.end(), [&](double v) { return v == 0.0 || v == spread; });
        EXPECT_NEAR(static_cast<double>(clipped) / n, 0.0455, 0.003);  // P(|N| > 2)
        break;
      }
    }
  }
}

TEST(LogitLaws, TwoPointContainsBothValuesAtEveryN) {
  for (std::uint64_t n = 2; n <= 64; ++n) {
    for (std::uint64_t key = 0; key < 20; ++key) {
      const auto e = all_logits(LogitLaw::TwoPoint, n, 1.5, key);
      EXPECT_NE(std::find(e.begin(), e.end(), 1.5), e.end());
      EXPECT_NE(std::find(e.begin(), e.end(), 0.0), e.end());
    }
  }
}

TEST(LogitLaws, BadArgumentsThrow) {
  double out[4];
  EXPECT_THROW(generate_logits(LogitLaw::Uniform, -1.0, 4, 0, 0, out, 4), sharp::BadInput);
  EXPECT_THROW(generate_logits(LogitLaw::Uniform, NAN, 4, 0, 0, out, 4), sharp::BadInput);
  EXPECT_THROW(generate_logits(LogitLaw::Uniform, 1.0, 4, 0, 1, out, 4), sharp::BadInput);
  EXPECT_THROW(generate_logits(LogitLaw::Uniform, 1.0, 0, 0, 0, out, 0), sharp::BadInput);
}

// The y values of a lane generator from index `first` on, in index order (count a multiple of kStep).
template <class Gen>
std::vector<double> lane_values(std::uint64_t key, double C, std::uint64_t first, std::size_t count) {
  Gen gen(key, C, first);
  std::vector<double> y(count);
  for (std::size_t done = 0; done < count; done += Gen::kStep) {
    std::size_t slot = 0;
    const auto keep = [&](const lanes::B& batch) {
      alignas(64) double lane[lanes::W];
      batch.store_aligned(lane);
      for (std::size_t l = 0; l < lanes::W; ++l) y[done + Gen::offset(slot + l)] = lane[l];
      slot += lanes::W;
    };
    if (done == 0) {
      gen.first_step(keep);
    } else {
      gen.step(keep);
    }
  }
  return y;
}

TEST(DispersionLanes, EqualTheStoredLawUpToRoundingInBase2Units) {
  const double spread = 3.0, theta = 0.7, top = spread / theta, C = top * std::numbers::log2e;
  const std::uint64_t n = std::uint64_t{1} << 40;  // any row length: only the indices matter
  for (std::uint64_t first : {std::uint64_t{0}, std::uint64_t{1024}, std::uint64_t{1} << 33}) {
    const std::size_t count = 4096;
    std::vector<double> z(count);
    for (LogitLaw law : kLaws) {
      generate_scaled_logits(law, spread, n, 17, first, 1.0 / theta, z.data(), count);
      std::vector<double> y;
      switch (law) {
        case LogitLaw::Uniform: y = lane_values<lanes::UniformLanes>(17, C, first, count); break;
        case LogitLaw::OneHot: y = lane_values<lanes::OneHotLanes>(17, C, first, count); break;
        case LogitLaw::TwoPoint: y = lane_values<lanes::TwoPointLanes>(17, C, first, count); break;
        case LogitLaw::Gaussian: y = lane_values<lanes::GaussianLanes>(17, C, first, count); break;
      }
      for (std::size_t j = 0; j < count; ++j) {
        ASSERT_LE(y[j], 0.0) << logit_law_name(law) << " " << first + j;
        ASSERT_GE(y[j], -C) << logit_law_name(law) << " " << first + j;
        // z = top + y·ln 2, each side rounded a few times: compare on the scale of the range.
        ASSERT_NEAR(top + y[j] * std::numbers::ln2, z[j], 8e-16 * top) << logit_law_name(law) << " " << first + j;
        if (law == LogitLaw::OneHot || law == LogitLaw::TwoPoint) {
          ASSERT_TRUE(y[j] == 0.0 || y[j] == -C) << first + j;  // exactly the two values
        }
      }
    }
  }
}

TEST(DispersionUniformDraws, AreOnePlusTheRngUniformsBitForBit) {
  const UniformDraws draws(23);
  for (std::uint64_t first : {std::uint64_t{0}, std::uint64_t{8}, std::uint64_t{65536}, (std::uint64_t{1} << 41) + 64}) {
    const std::size_t count = 2048;
    std::vector<double> got(count), want(count);
    draws.fill(first, count, got.data());
    sharp::rng::fill_uniform(23, first, want.data(), count);
    for (std::size_t j = 0; j < count; ++j) ASSERT_EQ(got[j], 1.0 + want[j]) << first + j;
    // The two halves alone write only their own slots.
    std::vector<double> lanes_only(count, -1.0);
    draws.fill_lanes(first, count, lanes_only.data());
    for (std::size_t j = 0; j < count; ++j) {
      const bool lane_slot = j % UniformDraws::kGroup < UniformDraws::W;
      ASSERT_EQ(lanes_only[j], lane_slot ? got[j] : -1.0) << j;
    }
  }
}

TEST(DispersionBlockPass, PipelinedUniformTopPassEqualsThePlainLoopBitForBit) {
  // SumsFromShift with shift 0 takes the plain loop over the same y and the same 2^y (inside the
  // range, the bounded exp2 equals the unchecked one), in the same order: the sums must be identical.
  const double C = 6.5 * std::numbers::log2e;
  for (std::uint64_t count : {std::uint64_t{1024}, std::uint64_t{3 * 1024 + 517}, kDispersionBlock}) {
    const BlockResult top = block_pass(LogitLaw::Uniform, 5, C, Pass{PassKind::SumsFromTop}, 2 * kDispersionBlock, count);
    const BlockResult plain =
        block_pass(LogitLaw::Uniform, 5, C, Pass{PassKind::SumsFromShift, 0.0}, 2 * kDispersionBlock, count);
    const BlockResult ext = block_pass(LogitLaw::Uniform, 5, C, Pass{PassKind::Extremes}, 2 * kDispersionBlock, count);
    EXPECT_EQ(top.softmax.sum.sum, plain.softmax.sum.sum) << count;
    EXPECT_EQ(top.softmax.sum.comp, plain.softmax.sum.comp) << count;
    EXPECT_EQ(top.softmax.weighted.sum, plain.softmax.weighted.sum) << count;
    EXPECT_EQ(top.softmax.weighted.comp, plain.softmax.weighted.comp) << count;
    EXPECT_EQ(top.y_min, ext.y_min) << count;
    EXPECT_EQ(top.softmax.max, ext.softmax.max) << count;
  }
}

TEST(DispersionRow, AboveSpread600TheTwoPassPathMatchesADirectComputation) {
  // δ/θ = 650: weights down to e^−650 are still normal doubles. δ/θ = 2000: those below 2^−1021
  // of the largest are flushed to 0 (negligible), so α_min underflows and is not compared.
  for (LogitLaw law : kLaws) {
    for (double spread : {650.0, 2000.0}) {
      for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{1000}, std::uint64_t{70001}}) {
        SCOPED_TRACE(testing::Message() << logit_law_name(law) << " n=" << n << " spread=" << spread);
        const RowStatistics stats = row_statistics(law, n, spread, 1.0, 31, 2);
        EXPECT_EQ(stats.softmax.shift, stats.y_max());  // relative to the max
        const DispersionRow row = dispersion_row(law, n, spread, 1.0, 31, 2);
        const Direct want = direct(all_logits(law, n, spread, 31), 1.0);
        EXPECT_LT(rel_err(row.alpha_max, want.alpha_max), 1e-12);
        if (spread < 700) {
          EXPECT_LT(rel_err(row.alpha_min, want.alpha_min), 1e-12);
        }
        if (want.entropy > 1e-300) {
          EXPECT_LT(std::fabs(row.entropy - static_cast<double>(want.entropy)), 1e-12 * static_cast<double>(want.entropy));
        } else {
          EXPECT_LE(row.entropy, 1e-300);
        }
        EXPECT_EQ(row.violations, 0u);
      }
    }
  }
}

TEST(DispersionRow, SumsStayRelativeToTheTopExceptWhereThatCostsAccuracy) {
  // Long rows: the max is at (or within δ/(θn) of) the top, one pass suffices.
  for (LogitLaw law : kLaws) {
    const RowStatistics stats = row_statistics(law, 200000, 4.0, 1.0, 3, 1);
    EXPECT_EQ(stats.softmax.shift, 0.0) << logit_law_name(law);
  }
  // One logit below the top: H = 0 must come out exactly, so the sums are redone from the max.
  const RowStatistics single = row_statistics(LogitLaw::Gaussian, 1, 4.0, 1.0, 3, 1);
  EXPECT_LT(single.y_max(), 0.0);
  EXPECT_EQ(single.softmax.shift, single.y_max());
  EXPECT_EQ(single.entropy(), 0.0);
  EXPECT_EQ(single.alpha_max(), 1.0);
}

TEST(DispersionRow, EveryLawMatchesADirectComputation) {
  const std::vector<std::uint64_t> sizes{1, 2, 3, 5, 100, 1000, 4099, 70000, 200003};
  for (LogitLaw law : kLaws) {
    for (std::uint64_t n : sizes) {
      for (auto [spread, theta] : {std::pair{4.0, 1.0}, {1.0, 0.3}, {10.0, 2.0}}) {
        SCOPED_TRACE(testing::Message() << logit_law_name(law) << " n=" << n << " spread=" << spread
                                        << " theta=" << theta);
        const DispersionRow row = dispersion_row(law, n, spread, theta, 99, 2);
        const Direct want = direct(all_logits(law, n, spread, 99), theta);
        EXPECT_LT(rel_err(row.alpha_max, want.alpha_max), 1e-12);
        EXPECT_LT(rel_err(row.alpha_min, want.alpha_min), 1e-12);
        if (want.entropy > 0) {
          EXPECT_LT(rel_err(row.entropy, want.entropy), 1e-12);
        } else {
          EXPECT_EQ(row.entropy, 0.0);  // n = 1
        }
        EXPECT_EQ(row.violations, 0u);
      }
    }
  }
}

TEST(DispersionRow, OneAndTwoThreadsGiveIdenticalBits) {
  for (LogitLaw law : kLaws) {
    for (std::uint64_t n : {std::uint64_t{3} * kDispersionBlock + 123, std::uint64_t{1} << 21}) {
      const DispersionRow one = dispersion_row(law, n, 5.0, 0.7, 1234, 1);
      const DispersionRow two = dispersion_row(law, n, 5.0, 0.7, 1234, 2);
      EXPECT_EQ(one.alpha_max, two.alpha_max) << logit_law_name(law) << " " << n;
      EXPECT_EQ(one.alpha_min, two.alpha_min) << logit_law_name(law) << " " << n;
      EXPECT_EQ(one.entropy, two.entropy) << logit_law_name(law) << " " << n;
      EXPECT_EQ(one.violations, two.violations);
      const auto s1 = row_statistics(law, n, 5.0, 0.7, 1234, 1);
      const auto s3 = row_statistics(law, n, 5.0, 0.7, 1234, 3);
      EXPECT_EQ(std::memcmp(&s1, &s3, sizeof(s1)), 0) << logit_law_name(law) << " " << n;
    }
  }
}

TEST(DispersionRow, OneHotTracksTheWorstCaseUpTo2To30WithBoundedMemory) {
  // δ/θ = 20 and 32.74 (Gemma 7B's largest measured spread) are the hardest for the sums: one
  // weight of 1 and many of ~1e-9 share the first block's lanes.
  for (auto [spread, theta] : {std::pair{4.0, 1.0}, {5.69, 1.0}, {0.3, 1.0}, {40.0, 2.0}, {32.74, 1.0}}) {
    for (int k = 1; k <= 30; ++k) {
      if (spread != 4.0 && k > 24) break;  // one sweep goes all the way (keeps the test ~seconds)
      const std::uint64_t n = std::uint64_t{1} << k;
      const DispersionRow row = dispersion_row(LogitLaw::OneHot, n, spread, theta, 0, 2);
      const double want = worst_case_alpha_max(n, spread, theta);
      EXPECT_LT(rel_err(row.alpha_max, want), 1e-12) << "n = 2^" << k;
      EXPECT_LT(rel_err(row.alpha_min, want * std::exp(-spread / theta)), 1e-12) << "n = 2^" << k;
      EXPECT_EQ(row.violations, 0u);
    }
  }
  // The whole process, 2^30 logits included, stays far below 64 MiB (ru_maxrss is in KiB).
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  EXPECT_LT(usage.ru_maxrss, 64 * 1024);
}

TEST(DispersionRow, TheBoundNeverFails) {
  for (LogitLaw law : kLaws) {
    for (double ratio : {0.0, 0.5, 1.0, 4.0, 10.0, 30.0, 200.0}) {
      for (std::uint64_t n : {1, 2, 17, 1000, 70001}) {
        const DispersionRow row = dispersion_row(law, n, ratio * 0.5, 0.5, n + 3, 2);
        EXPECT_EQ(row.violations, 0u) << logit_law_name(law) << " ratio=" << ratio << " n=" << n;
        EXPECT_LE(row.alpha_max, bound_upper(n, ratio * 0.5, 0.5) * (1 + kViolationTolerance));
        EXPECT_GE(row.alpha_min, bound_lower(n, ratio * 0.5, 0.5) * (1 - kViolationTolerance));
        EXPECT_LE(row.entropy, std::log(static_cast<double>(n)) * (1 + 1e-14));
      }
    }
  }
  // δ = 0: every coefficient is exactly 1/n, on both bounds at once.
  const DispersionRow flat = dispersion_row(LogitLaw::Uniform, 1000, 0.0, 1.0, 1, 1);
  EXPECT_EQ(flat.alpha_max, 1.0 / 1000);
  EXPECT_EQ(flat.alpha_min, 1.0 / 1000);
  EXPECT_EQ(flat.violations, 0u);
}

TEST(DispersionRow, CountOutsideAgreesWithADirectCount) {
  const std::uint64_t n = 150001;
  const double spread = 3.0, theta = 0.8;
  for (LogitLaw law : {LogitLaw::Uniform, LogitLaw::Gaussian, LogitLaw::TwoPoint}) {
    const auto stats = row_statistics(law, n, spread, theta, 8, 2);
    const auto e = all_logits(law, n, spread, 8);
    const long double z_max = static_cast<long double>(*std::max_element(e.begin(), e.end())) / theta;
    const Direct d = direct(e, theta);
    // A band around the middle coefficient: many coefficients fall outside it on both sides.
    const double mid = std::sqrt(static_cast<double>(d.alpha_max * d.alpha_min));
    const double lower = mid * 0.8, upper = mid * 1.25;
    std::uint64_t want = 0;
    for (double v : e) {
      const long double alpha = std::exp(static_cast<long double>(v) / theta - z_max) * d.alpha_max;
      want += alpha < lower || alpha > upper;
    }
    EXPECT_GT(want, 0u);
    EXPECT_EQ(count_outside(law, n, spread, theta, 8, 2, stats, lower, upper), want) << logit_law_name(law);
    EXPECT_EQ(count_outside(law, n, spread, theta, 8, 1, stats, lower, upper), want) << logit_law_name(law);
  }
}

TEST(DispersionBounds, ClosedForms) {
  EXPECT_DOUBLE_EQ(bound_upper(10, 1.0, 1.0), std::exp(1.0) / 10);
  EXPECT_DOUBLE_EQ(bound_lower(10, 1.0, 1.0), std::exp(-1.0) / 10);
  EXPECT_DOUBLE_EQ(bound_upper(8, 3.0, 2.0), std::exp(1.5) / 8);
  EXPECT_EQ(worst_case_alpha_max(1, 7.0, 1.0), 1.0);
  EXPECT_EQ(worst_case_alpha_max(2, 0.0, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(worst_case_alpha_max(101, std::log(4.0), 1.0), 1.0 / 26.0);
  // docs/science.md#logit-spread-in-llms: δ = 5.69, θ = 1 reaches α_max < 0.5 at n ≈ 297.
  EXPECT_NEAR(smallest_n_below(0.5, 5.69, 1.0), 1.0 + std::exp(5.69), 1e-9);
  EXPECT_EQ(smallest_integer_n_below(0.5, 5.69, 1.0), 297u);
  for (double eps : {0.5, 0.1, 0.01}) {
    for (double ratio : {0.0, 0.3, 1.0, 2.0, 5.69, 10.0}) {
      const std::uint64_t n = smallest_integer_n_below(eps, ratio, 1.0);
      EXPECT_LT(worst_case_alpha_max(n, ratio, 1.0), eps) << eps << " " << ratio;
      if (n > 1) {
        EXPECT_GE(worst_case_alpha_max(n - 1, ratio, 1.0), eps * (1 - 1e-14)) << eps << " " << ratio;
      }
    }
  }
  // The worst case sits between the bounds and meets the upper one only at n = 1 or δ = 0.
  for (std::uint64_t n : {2u, 10u, 1000u}) {
    EXPECT_LT(worst_case_alpha_max(n, 2.0, 1.0), bound_upper(n, 2.0, 1.0));
    EXPECT_GT(worst_case_alpha_max(n, 2.0, 1.0), bound_lower(n, 2.0, 1.0));
  }
}

TEST(DispersionBounds, BadArgumentsThrow) {
  EXPECT_THROW(bound_upper(0, 1.0, 1.0), sharp::BadInput);
  EXPECT_THROW(bound_upper(4, -1.0, 1.0), sharp::BadInput);
  EXPECT_THROW(bound_lower(4, 1.0, 0.0), sharp::BadInput);
  EXPECT_THROW(worst_case_alpha_max(4, 1.0, -2.0), sharp::BadInput);
  EXPECT_THROW(smallest_n_below(1.0, 1.0, 1.0), sharp::BadInput);
  EXPECT_THROW(smallest_n_below(0.0, 1.0, 1.0), sharp::BadInput);
  EXPECT_THROW(dispersion_row(LogitLaw::Uniform, 0, 1.0, 1.0, 0, 1), sharp::BadInput);
  EXPECT_THROW(dispersion_row(LogitLaw::Uniform, 10, 1.0, NAN, 0, 1), sharp::BadInput);
  EXPECT_THROW(dispersion_row(LogitLaw::Uniform, 10, INFINITY, 1.0, 0, 1), sharp::BadInput);
  EXPECT_THROW(dispersion_row(LogitLaw::Uniform, 10, 1.0, 1.0, 0, 0), sharp::BadInput);
}

}  // namespace

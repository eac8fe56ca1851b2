// The one Wilson interval (stats/wilson.hpp): its value against Wilson's formula worked by hand,
// its bounds at k = 0 and n, and NaN for no trials (the convention both evaluations record).
#include <cmath>

#include <gtest/gtest.h>

#include "stats/wilson.hpp"

using sharp::stats::wilson_interval;

TEST(Wilson, MatchesTheFormula) {
  // k = 45 of n = 100: centre (0.45 + 3.8415/200)/1.038415 = 0.451850,
  // half 1.959964·√(0.002475 + 0.00009604)/1.038415 = 0.095704.
  const auto ci = wilson_interval(45, 100);
  EXPECT_NEAR(ci.low, 0.356145, 1e-6);
  EXPECT_NEAR(ci.high, 0.547554, 1e-6);
}

TEST(Wilson, StaysInsideTheUnitIntervalAtTheEnds) {
  const auto none = wilson_interval(0, 20), all = wilson_interval(20, 20);
  EXPECT_EQ(none.low, 0.0);
  EXPECT_GT(none.high, 0.0);
  EXPECT_LT(all.low, 1.0);
  EXPECT_EQ(all.high, 1.0);
}

TEST(Wilson, NoTrialsGiveNaN) {
  const auto ci = wilson_interval(0, 0);
  EXPECT_TRUE(std::isnan(ci.low));
  EXPECT_TRUE(std::isnan(ci.high));
}

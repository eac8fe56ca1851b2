// The library's float exp and exp2 (core/simd_exp.hpp) against long double: the maximum error
// in float ulps over the whole domain (every 211th float of it, and the reduction's breakpoints),
// the flush to 0 below FLT_MIN (−inf included), overflow to +inf, NaN kept, exact powers of two.
// What holds for both lane types (the clamp, lanes against scalar calls, the register table, the
// pinned bits) is tested once, for both, in test_simd_exp.cpp.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <vector>

#include "core/simd_exp.hpp"

namespace {

using B = xsimd::batch<float>;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The bound the header states (measured about 1 ulp: see the tests' output lines).
constexpr double kMaxUlp = 2.0;

// |got − exact| in units of the last place of the exact value (a normal float's ulp).
double ulp_error(float got, long double exact) {
  const int e = std::ilogb(static_cast<float>(exact));
  const long double ulp = std::ldexp(1.0L, e - 23);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / ulp);
}

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Every `stride`-th float of [lo, hi] (by bit pattern, both signs), and both neighbours of every
// reduction breakpoint m/16·unit in it (|f| = 1/16 there).
std::vector<float> arguments(float lo, float hi, float unit, std::uint32_t stride) {
  std::vector<float> x;
  for (std::uint32_t u = 0; u < 0x7f800000u; u += stride) {
    for (const float v : {from_bits(u), -from_bits(u)}) {
      if (v >= lo && v <= hi) x.push_back(v);
    }
  }
  for (double m = std::floor(16.0 * lo / unit); m <= 16.0 * hi / unit; m += 1.0) {
    const float b = static_cast<float>(m / 16.0 * unit);
    for (const float v : {std::nextafter(b, -kInf), b, std::nextafter(b, kInf)}) {
      if (v >= lo && v <= hi) x.push_back(v);
    }
  }
  return x;
}

TEST(SimdExpFloat, Exp2WithinBoundOverItsDomain) {
  double worst = 0.0;
  float worst_at = 0.0f;
  const std::vector<float> ys = arguments(-126.0f, std::nextafter(128.0f, 0.0f), 1.0f, 211);
  for (float y : ys) {
    const float got = sharp::simd::exp2f(y);
    const double err = ulp_error(got, std::exp2(static_cast<long double>(y)));
    if (err > worst) {
      worst = err;
      worst_at = y;
    }
    if (y < 127.9375f) {  // the same bits in range
      ASSERT_EQ(sharp::simd::exp2_in_range(B(y)).get(0), got) << y;
    }
  }
  std::cout << "exp2 (float): max error " << worst << " ulp (at y = " << worst_at << ") over " << ys.size()
            << " arguments\n";
  EXPECT_LE(worst, kMaxUlp);
}

TEST(SimdExpFloat, ExpWithinBoundOverItsDomain) {
  double worst = 0.0;
  float worst_at = 0.0f;
  const std::vector<float> xs = arguments(sharp::simd::ExpConstants<float>::kExpLowest,
                                          sharp::simd::ExpConstants<float>::kExpHighest, 0.69314718f, 211);
  for (float x : xs) {
    const float got = sharp::simd::expf(x);
    const double err = ulp_error(got, std::exp(static_cast<long double>(x)));
    if (err > worst) {
      worst = err;
      worst_at = x;
    }
    if (x < 88.0f) {
      ASSERT_EQ(sharp::simd::exp_in_range(B(x)).get(0), got) << x;
    }
  }
  std::cout << "exp (float): max error " << worst << " ulp (at x = " << worst_at << ") over " << xs.size()
            << " arguments\n";
  EXPECT_LE(worst, kMaxUlp);
}

TEST(SimdExpFloat, FlushesBelowFltMinToZero) {
  for (float x = -110.0f; x < sharp::simd::ExpConstants<float>::kExpLowest; x += 0.0137f) {
    ASSERT_LT(std::exp(static_cast<long double>(x)), static_cast<long double>(FLT_MIN)) << x;
    ASSERT_EQ(sharp::simd::expf(x), 0.0f) << x;
    ASSERT_EQ(sharp::simd::expf_bounded(x), 0.0f) << x;
  }
  EXPECT_GE(std::exp(static_cast<long double>(sharp::simd::ExpConstants<float>::kExpLowest)),
            static_cast<long double>(FLT_MIN));
  EXPECT_GE(sharp::simd::expf(sharp::simd::ExpConstants<float>::kExpLowest), FLT_MIN);
  EXPECT_EQ(sharp::simd::expf(-1e30f), 0.0f);
  EXPECT_EQ(sharp::simd::expf(-kInf), 0.0f);
  EXPECT_EQ(sharp::simd::exp2f_bounded(-126.0f), 0x1p-126f);
  EXPECT_EQ(sharp::simd::exp2f_bounded(-126.5f), 0.0f);
  EXPECT_EQ(sharp::simd::exp2f_bounded(-kInf), 0.0f);
  EXPECT_EQ(sharp::simd::exp2f(-kInf), 0.0f);
}

TEST(SimdExpFloat, OverflowsToInfinity) {
  EXPECT_LT(sharp::simd::expf(sharp::simd::ExpConstants<float>::kExpHighest), kInf);
  EXPECT_LE(ulp_error(sharp::simd::expf(sharp::simd::ExpConstants<float>::kExpHighest),
                      std::exp(static_cast<long double>(sharp::simd::ExpConstants<float>::kExpHighest))),
            kMaxUlp);
  EXPECT_EQ(sharp::simd::expf(std::nextafter(sharp::simd::ExpConstants<float>::kExpHighest, kInf)), kInf);
  EXPECT_EQ(sharp::simd::expf(89.0f), kInf);
  EXPECT_EQ(sharp::simd::expf(kInf), kInf);
  EXPECT_EQ(sharp::simd::exp2f(128.0f), kInf);
  EXPECT_EQ(sharp::simd::exp2f(kInf), kInf);
  EXPECT_LT(sharp::simd::exp2f(127.99f), kInf);
}

TEST(SimdExpFloat, NaNStaysNaN) {
  EXPECT_TRUE(std::isnan(sharp::simd::expf(kNaN)));
  EXPECT_TRUE(std::isnan(sharp::simd::expf_bounded(kNaN)));
  EXPECT_TRUE(std::isnan(sharp::simd::exp2f(kNaN)));
  EXPECT_TRUE(std::isnan(sharp::simd::exp2f_bounded(kNaN)));
  EXPECT_TRUE(std::isnan(sharp::simd::exp2_in_range(B(kNaN)).get(0)));
}

TEST(SimdExpFloat, ExactWherePossible) {
  for (int k = -126; k <= 127; ++k) ASSERT_EQ(sharp::simd::exp2f(static_cast<float>(k)), std::ldexp(1.0f, k)) << k;
  EXPECT_EQ(sharp::simd::expf(0.0f), 1.0f);
  EXPECT_EQ(sharp::simd::expf(-0.0f), 1.0f);
}

}  // namespace

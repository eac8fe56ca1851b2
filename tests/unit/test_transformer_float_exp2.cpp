// The float exp lanes of blockwise attention (transformer/float_exp2.hpp): 2^y against long double on
// every 97th float of [−126, 0] and at the integers (where the reduction's k changes), within 2 ulp;
// below the range the weight is FLT_MIN; lanes equal the scalar call.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "transformer/float_exp2.hpp"

namespace {

using sharp::transformer::exp2_nonpositive;

double ulps(float got, long double want) {
  const long double ulp = std::nextafter(float(want), std::numeric_limits<float>::infinity()) - float(want);
  return double(std::fabs((long double)got - want) / ulp);
}

TEST(FloatExp2, WithinTwoUlpOverTheRange) {
  double worst = 0;
  std::uint32_t bits;
  const float lowest = sharp::transformer::kFloatExp2Lowest;
  std::memcpy(&bits, &lowest, 4);
  for (std::uint32_t b = 0x80000000u; b <= bits; b += 97) {   // −0 up to −126 through every binade
    float y;
    std::memcpy(&y, &b, 4);
    worst = std::max(worst, ulps(exp2_nonpositive(y), std::exp2((long double)y)));
  }
  for (int k = -126; k <= 0; ++k)
    for (float y : {float(k), std::nextafter(float(k), 0.0f), std::nextafter(float(k), -1000.0f), float(k) + 0.5f})
      if (y >= lowest && y <= 0.0f) worst = std::max(worst, ulps(exp2_nonpositive(y), std::exp2((long double)y)));
  EXPECT_LE(worst, 2.0);
  std::printf("worst error %.2f ulp\n", worst);
  EXPECT_EQ(exp2_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(exp2_nonpositive(-1.0f), 0.5f);
  EXPECT_EQ(exp2_nonpositive(-126.0f), std::numeric_limits<float>::min());
  EXPECT_EQ(exp2_nonpositive(-300.0f), std::numeric_limits<float>::min());
  EXPECT_EQ(exp2_nonpositive(-std::numeric_limits<float>::infinity()), std::numeric_limits<float>::min());
}

TEST(FloatExp2, LanesEqualTheScalarCall) {
  using B = xsimd::batch<float>;
  alignas(64) float y[B::size], w[B::size];
  for (int start = 0; start < 200; ++start) {
    for (std::size_t l = 0; l < B::size; ++l) y[l] = -0.37f * float(start + int(l) * 13);
    exp2_nonpositive(B::load_aligned(y)).store_aligned(w);
    for (std::size_t l = 0; l < B::size; ++l) EXPECT_EQ(w[l], exp2_nonpositive(y[l])) << y[l];
  }
}

}  // namespace

// The library's vectorised exp and exp2 (core/simd_exp.hpp) on double lanes against long double:
// the maximum error in ulps over the whole domain, the flush to 0 below DBL_MIN (−inf included),
// overflow to +inf, NaN kept, exact powers of two. For both lane types (the float-only checks are in
// test_simd_exp_float.cpp): the exact 0 at the kernels' clamp, lanes equal to scalar calls, the
// table lookup of the AVX2 / AVX-512 path equal to the generic one lane at a time, and the bits of
// every function pinned.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/simd_exp.hpp"
#include "rng/counter_rng.hpp"

namespace {

using B = xsimd::batch<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The bound the header states (max measured about 1.1 ulp: see the tests' output lines).
constexpr double kMaxUlp = 1.5;

// |got − exact| in units of the last place of the exact value (a normal double's ulp).
double ulp_error(double got, long double exact) {
  const int e = std::ilogb(static_cast<double>(exact));
  const long double ulp = std::ldexp(1.0L, e - 52);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / ulp);
}

// Arguments: uniform over [lo, hi], densely in [−1, 1] and [−60, 0] (softmax's range), and near
// the reduction's breakpoints (multiples of 1/16 in base 2, scaled by `unit`) where |f| is largest.
std::vector<double> arguments(double lo, double hi, double unit, std::uint64_t key) {
  const std::size_t n = 400000;
  std::vector<double> u(n);
  sharp::rng::fill_uniform(key, 0, u.data(), n);
  std::vector<double> x;
  x.reserve(n + 4000);
  for (std::size_t i = 0; i < n; ++i) {
    switch (i % 4) {
      case 0: x.push_back(lo + (hi - lo) * u[i]); break;
      case 1: x.push_back(-1.0 + 2.0 * u[i]); break;
      case 2: x.push_back(-60.0 * u[i]); break;
      default: {  // next to a breakpoint m/16 (|f| = 1/16 there)
        const double m = std::floor(16.0 * (lo / unit) + 16.0 * ((hi - lo) / unit) * u[i]);
        x.push_back(std::nextafter(m / 16.0 * unit, (i / 4) % 2 ? kInf : -kInf));
      }
    }
  }
  for (double& v : x) v = std::min(std::max(v, lo), hi);
  return x;
}

TEST(SimdExp, Exp2WithinBoundOverItsDomain) {
  double worst = 0.0, worst_at = 0.0;
  for (double y : arguments(-1021.0, 1023.99, 1.0, 1)) {
    const double got = sharp::simd::exp2(y);
    const double err = ulp_error(got, std::exp2(static_cast<long double>(y)));
    if (err > worst) worst = err, worst_at = y;
    if (y < 1023.9375) {
      ASSERT_EQ(sharp::simd::exp2_in_range(B(y)).get(0), got) << y;  // the same bits in range
    }
  }
  std::cout << "exp2: max error " << worst << " ulp (at y = " << worst_at << ")\n";
  EXPECT_LE(worst, kMaxUlp);
}

// The 12-digit exp2 of adaptive temperature's entropy pass: relative error below 1e-12 over the
// domain (header: 6e-13), +0 exactly at the clamp, NaN kept.
TEST(SimdExp, Exp2TwelveDigitsWithinBoundOverItsDomain) {
  double worst = 0.0, worst_at = 0.0;
  for (double y : arguments(-1022.0, 1023.93, 1.0, 3)) {
    const long double exact = std::exp2(static_cast<long double>(y));
    const double got = sharp::simd::exp2_in_range_12_digits(B(y)).get(0);
    const double err = static_cast<double>(std::fabs((static_cast<long double>(got) - exact) / exact));
    if (err > worst) worst = err, worst_at = y;
  }
  std::cout << "exp2 to 12 digits: max relative error " << worst << " (at y = " << worst_at << ")\n";
  EXPECT_LE(worst, 1e-12);
  EXPECT_GT(worst, 1e-14) << "a polynomial of degree 5 cannot be this close: is the full exp in use?";
  const double zero = sharp::simd::exp2_in_range_12_digits(B(sharp::simd::kExp2Zero)).get(0);
  EXPECT_EQ(zero, 0.0);
  EXPECT_FALSE(std::signbit(zero));
  EXPECT_TRUE(std::isnan(sharp::simd::exp2_in_range_12_digits(B(kNaN)).get(0)));
}

TEST(SimdExp, ExpWithinBoundOverItsDomain) {
  double worst = 0.0, worst_at = 0.0;
  const double ln2 = 0.693147180559945309417;
  for (double x : arguments(sharp::simd::kExpLowest, 709.7827, ln2, 2)) {
    const double got = sharp::simd::exp(x);
    const double err = ulp_error(got, std::exp(static_cast<long double>(x)));
    if (err > worst) worst = err, worst_at = x;
    if (x < 1023.9375 * ln2) {
      ASSERT_EQ(sharp::simd::exp_in_range(B(x)).get(0), got) << x;
    }
  }
  std::cout << "exp: max error " << worst << " ulp (at x = " << worst_at << ")\n";
  EXPECT_LE(worst, kMaxUlp);
}

TEST(SimdExp, FlushesBelowDblMinToZero) {
  // exp: every x whose e^x is below DBL_MIN (the subnormal region and beyond) gives exactly 0.
  for (double x = -760.0; x < sharp::simd::kExpLowest; x += 0.0137) {
    ASSERT_LT(std::exp(static_cast<long double>(x)), static_cast<long double>(DBL_MIN)) << x;
    ASSERT_EQ(sharp::simd::exp(x), 0.0) << x;
    ASSERT_EQ(sharp::simd::exp_bounded(x), 0.0) << x;
  }
  EXPECT_GE(sharp::simd::exp(sharp::simd::kExpLowest), DBL_MIN * (1.0 - 1e-15));
  EXPECT_GT(sharp::simd::exp(-708.0), 0.0);
  EXPECT_EQ(sharp::simd::exp(-709.0), 0.0);
  EXPECT_EQ(sharp::simd::exp(-1e30), 0.0);
  EXPECT_EQ(sharp::simd::exp(-kInf), 0.0);
  EXPECT_EQ(sharp::simd::exp_bounded(-kInf), 0.0);
  // exp2 flushes below 2^-1021 (2·DBL_MIN; the dispersion kernel's contract).
  EXPECT_EQ(sharp::simd::exp2_bounded(-1021.0), 0x1p-1021);
  EXPECT_EQ(sharp::simd::exp2_bounded(-1021.5), 0.0);
  EXPECT_EQ(sharp::simd::exp2_bounded(-1074.0), 0.0);
  EXPECT_EQ(sharp::simd::exp2_bounded(-kInf), 0.0);
  EXPECT_EQ(sharp::simd::exp2(-kInf), 0.0);
}

TEST(SimdExp, OverflowsToInfinity) {
  EXPECT_EQ(sharp::simd::exp(710.0), kInf);
  EXPECT_EQ(sharp::simd::exp(1e300), kInf);
  EXPECT_EQ(sharp::simd::exp(kInf), kInf);
  EXPECT_LE(ulp_error(sharp::simd::exp(709.7827), std::exp(static_cast<long double>(709.7827))),
            kMaxUlp);  // 0.99999·DBL_MAX
  EXPECT_EQ(sharp::simd::exp2(1024.0), kInf);
  EXPECT_EQ(sharp::simd::exp2(kInf), kInf);
  EXPECT_LT(sharp::simd::exp2(1023.99), kInf);
}

TEST(SimdExp, NaNStaysNaN) {
  EXPECT_TRUE(std::isnan(sharp::simd::exp(kNaN)));
  EXPECT_TRUE(std::isnan(sharp::simd::exp_bounded(kNaN)));
  EXPECT_TRUE(std::isnan(sharp::simd::exp2(kNaN)));
  EXPECT_TRUE(std::isnan(sharp::simd::exp2_bounded(kNaN)));
  EXPECT_TRUE(std::isnan(sharp::simd::exp2_in_range(B(kNaN)).get(0)));
}

TEST(SimdExp, ExactWherePossible) {
  for (int k = -1021; k <= 1023; ++k) ASSERT_EQ(sharp::simd::exp2(static_cast<double>(k)), std::ldexp(1.0, k)) << k;
  EXPECT_EQ(sharp::simd::exp(0.0), 1.0);
  EXPECT_EQ(sharp::simd::exp(-0.0), 1.0);
  EXPECT_EQ(sharp::simd::exp2(0.5), std::sqrt(2.0));
}

// The tests below hold for both lane types, the one method over ExpConstants<T>.
template <class T>
class SimdExpBothTypes : public ::testing::Test {};
using LaneTypes = ::testing::Types<double, float>;
TYPED_TEST_SUITE(SimdExpBothTypes, LaneTypes);

// Kernels clamp y at kExp2Zero to weigh masked entries 0 without a select: exactly +0 there, and
// between it and the domain's bottom (2^-1022, 2^-126) some value below the smallest normal, never
// negative, NaN or large.
TYPED_TEST(SimdExpBothTypes, Exp2InRangeIsExactlyZeroAtItsClamp) {
  using T = TypeParam;
  using BT = xsimd::batch<T>;
  const T clamp = sharp::simd::ExpConstants<T>::kExp2Zero;
  const T zero = sharp::simd::exp2_in_range(BT(clamp)).get(0);
  EXPECT_EQ(zero, T(0));
  EXPECT_FALSE(std::signbit(zero));
  const T bottom = T(std::numeric_limits<T>::min_exponent - 1);  // −1022, −126
  for (T y = clamp; y < bottom; y += T(1) / 1024) {
    const T v = sharp::simd::exp2_in_range(BT(y)).get(0);
    ASSERT_TRUE(v >= T(0) && v < std::numeric_limits<T>::min()) << y << " -> " << v;
  }
}

TYPED_TEST(SimdExpBothTypes, LanesAgreeWithScalarCalls) {
  using T = TypeParam;
  using BT = xsimd::batch<T>;
  const auto scalar_exp2 = [](T x) {
    if constexpr (std::is_same_v<T, double>)
      return sharp::simd::exp2(x);
    else
      return sharp::simd::exp2f(x);
  };
  const auto scalar_exp = [](T x) {
    if constexpr (std::is_same_v<T, double>)
      return sharp::simd::exp(x);
    else
      return sharp::simd::expf(x);
  };
  alignas(64) T x[BT::size], lane[BT::size];
  for (std::size_t j = 0; j < BT::size; ++j) x[j] = T(-0.37) * static_cast<T>(j * j) - T(0.11) + T(3) * T(j % 2);
  sharp::simd::exp2(BT::load_aligned(x)).store_aligned(lane);
  for (std::size_t j = 0; j < BT::size; ++j) EXPECT_EQ(lane[j], scalar_exp2(x[j])) << j;
  sharp::simd::exp(BT::load_aligned(x)).store_aligned(lane);
  for (std::size_t j = 0; j < BT::size; ++j) EXPECT_EQ(lane[j], scalar_exp(x[j])) << j;
}

// The in-register table lookup (doubles: vpermd on AVX2, vpermq on AVX-512; floats: vpermps)
// against the reference lookup one lane at a time (the path of other ISAs): the same bits, over
// every table index and the whole exponent range, from the clamp to the top.
TYPED_TEST(SimdExpBothTypes, RegisterTableMatchesLaneByLaneLookup) {
  using T = TypeParam;
  using BT = xsimd::batch<T>;
  alignas(64) T y[BT::size];
  std::size_t filled = 0;
  const T top = T(std::numeric_limits<T>::max_exponent) - T(0.0625);  // 1023.9375, 127.9375
  for (T v = sharp::simd::ExpConstants<T>::kExp2Zero; v < top; v += T(0.0625 * 0.999)) {
    y[filled++] = v;
    if (filled < BT::size) continue;
    filled = 0;
    const BT t = BT::load_aligned(y) + BT(sharp::simd::ExpConstants<T>::kShifter);
    const BT fast = sharp::simd::detail::table_scale(t);
    const BT slow = sharp::simd::detail::table_scale_by_lane(t);
    for (std::size_t l = 0; l < BT::size; ++l) ASSERT_EQ(fast.get(l), slow.get(l)) << y[l];
  }
}

// The bits themselves, pinned: float and double share one method over ExpConstants<T>, and this
// digest of every scalar function of both types was recorded from the two separate headers it
// replaced (core/simd_exp.hpp and simd_exp_float.hpp at d0c2ce3): the same at x86-64-v3 and -v4
// (c9b5559e8c771add), another without FMA. A change of any result's last bit changes it; a change
// meant to move bits must say so here and remake the shipped results.
// FNV-1a of the bits of every scalar result over a fixed grid of arguments spanning and passing each
// domain (2^16 doubles in [−1100, 1100], 2^16 floats in [−140, 140], plus ±inf, NaN and the clamps).
inline std::uint64_t exp_bits_digest() {
  std::uint64_t h = 1469598103934665603ull;
  const auto add = [&h](const auto v) {
    unsigned char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    for (unsigned char c : b) h = (h ^ c) * 1099511628211ull;
  };
  using BD = xsimd::batch<double>;
  using BF = xsimd::batch<float>;
  const double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> ys{-kInf, kInf, std::numeric_limits<double>::quiet_NaN(), -1023.0, -1022.0, 1023.0, 1024.0};
  for (int i = 0; i < (1 << 16); ++i) ys.push_back(-1100.0 + 2200.0 * (i + 0.377) / (1 << 16));
  for (const double y : ys) {
    add(sharp::simd::exp2(y));
    add(sharp::simd::exp2_bounded(y));
    add(sharp::simd::exp(y));
    add(sharp::simd::exp_bounded(y));
    const double clamped = std::fmin(std::fmax(y, -1023.0), 1023.5);  // NaN: −1023
    add(sharp::simd::exp2_in_range(BD(clamped)).get(0));
    add(sharp::simd::exp2_in_range_12_digits(BD(clamped)).get(0));
    const float x = static_cast<float>(y / 7.8);
    add(sharp::simd::exp2f(x));
    add(sharp::simd::exp2f_bounded(x));
    add(sharp::simd::expf(x));
    add(sharp::simd::expf_bounded(x));
    add(sharp::simd::exp2_in_range(BF(std::fmin(std::fmax(x, -127.0f), 127.5f))).get(0));
  }
  return h;
}

TEST(SimdExp, BitsPinnedAcrossTheFloatAndDoubleMerge) {
#if !defined(__FMA__)
  GTEST_SKIP() << "pinned at x86-64-v3 and -v4; this build has no FMA, so its last bits differ";
#endif
  EXPECT_EQ(exp_bits_digest(), 0xc9b5559e8c771addull);
}

}  // namespace

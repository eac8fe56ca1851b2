// The shared finite-difference checker (tests/support/finite_differences.hpp) on functions whose
// gradients are known: a right gradient passes, a gradient wrong in one coordinate fails naming that
// coordinate, and a loss that does not depend on the inputs is refused (its check could not fail).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/finite_differences.hpp"

namespace {

using sharp::test::agrees_with_finite_differences;
using sharp::test::coordinates;
using sharp::test::gradient_agrees;
using sharp::test::numeric_gradient;

// L(x) = Σ sin(x_i)·x_{i+1} + x_0²: dL/dx_i = cos(x_i)·x_{i+1} + sin(x_{i−1}) (+ 2 x_0).
std::vector<double> true_gradient(const std::vector<double>& x) {
  std::vector<double> g(x.size(), 0.0);
  for (std::size_t i = 0; i + 1 < x.size(); ++i) {
    g[i] += std::cos(x[i]) * x[i + 1];
    g[i + 1] += std::sin(x[i]);
  }
  g[0] += 2 * x[0];
  return g;
}

TEST(FiniteDifferences, ARightGradientPassesAndAWrongOneFails) {
  std::vector<double> x = sharp::test::random_normal(12, 3);
  const std::vector<double> before = x;
  auto loss = [&] {
    double l = x[0] * x[0];
    for (std::size_t i = 0; i + 1 < x.size(); ++i) l += std::sin(x[i]) * x[i + 1];
    return l;
  };
  const std::vector<double> g = true_gradient(x);
  EXPECT_TRUE(agrees_with_finite_differences(g, x, loss, 1e-8, "right"));
  EXPECT_EQ(x, before);   // every coordinate restored

  std::vector<double> wrong = g;
  wrong[7] *= 1.001;
  const auto result = agrees_with_finite_differences(wrong, x, loss, 1e-6, "wrong");
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("coordinate 7"), std::string::npos) << result.message();

  // A subset (one tensor of a flat buffer): only its coordinates are compared.
  const auto which = coordinates(2, 4);
  EXPECT_TRUE(gradient_agrees(wrong.data(), which, numeric_gradient(x.data(), which, loss), 1e-8, "subset"));
}

TEST(FiniteDifferences, AConstantLossIsRefused) {
  std::vector<double> x = sharp::test::random_normal(5, 4);
  const auto result = agrees_with_finite_differences(std::vector<double>(5, 0.0), x, [] { return 1.0; }, 1e-6, "flat");
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("vacuous"), std::string::npos);
}

}  // namespace

#pragma once
// Finite-difference gradient checks (double) shared by the tests of hand-written backward passes.
//   numeric_gradient: central differences (f(x + h) − f(x − h))/2h of a scalar loss with respect to
//                     chosen coordinates of a buffer the loss reads (each restored afterwards).
//   gradient_agrees:  max |analytic − numeric| / max |numeric| <= tolerance, failing with the worst
//                     coordinate named; refuses a numeric gradient that is zero everywhere (a check
//                     that cannot fail).
//   agrees_with_finite_differences: both at once over a whole buffer (the common case).
//   dot: the scalar loss L = <v, output> such checks use, with v random (random_rows.hpp, included
//        here for random_normal).
// Usage: EXPECT_TRUE(agrees_with_finite_differences(dx, x, loss, 1e-6, "dx"));
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "random_rows.hpp"

namespace sharp::test {

inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Coordinates 0, stride, 2·stride, … of a buffer of `size` values (all of them with stride 1): a
// subsample that still visits every tensor of a flat parameter buffer when stride is small.
inline std::vector<std::size_t> every(std::size_t size, std::size_t stride = 1) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < size; i += std::max<std::size_t>(stride, 1)) out.push_back(i);
  return out;
}

// Coordinates first, first + 1, …, first + count − 1 (one tensor of a flat parameter buffer).
inline std::vector<std::size_t> coordinates(std::size_t first, std::size_t count) {
  std::vector<std::size_t> out(count);
  for (std::size_t k = 0; k < count; ++k) out[k] = first + k;
  return out;
}

// d loss / d x[i] for every i in `which`, by central differences with step h.
inline std::vector<double> numeric_gradient(double* x, const std::vector<std::size_t>& which,
                                            const std::function<double()>& loss, double h = 1e-5) {
  std::vector<double> g(which.size());
  for (std::size_t k = 0; k < which.size(); ++k) {
    double& xi = x[which[k]];
    const double saved = xi;
    xi = saved + h;
    const double up = loss();
    xi = saved - h;
    const double down = loss();
    xi = saved;
    g[k] = (up - down) / (2 * h);
  }
  return g;
}

// analytic[which[k]] against numeric[k].
inline ::testing::AssertionResult gradient_agrees(const double* analytic, const std::vector<std::size_t>& which,
                                                  const std::vector<double>& numeric, double tolerance,
                                                  const std::string& what) {
  double scale = 0.0, worst = 0.0;
  std::size_t at = 0;
  for (std::size_t k = 0; k < which.size(); ++k) {
    scale = std::max(scale, std::abs(numeric[k]));
    const double diff = std::abs(analytic[which[k]] - numeric[k]);
    if (!(diff <= worst)) worst = diff, at = k;
  }
  std::ostringstream msg;
  if (!(scale > 1e-8)) {
    msg << what << ": the numeric gradient is zero everywhere, the check would be vacuous";
    return ::testing::AssertionFailure() << msg.str();
  }
  if (!(worst / scale <= tolerance)) {
    msg << what << ": coordinate " << which[at] << " analytic " << analytic[which[at]] << " numeric " << numeric[at]
        << " (relative error " << worst / scale << " > " << tolerance << ", max |numeric| " << scale << ")";
    return ::testing::AssertionFailure() << msg.str();
  }
  return ::testing::AssertionSuccess();
}

// analytic [x.size()] against central differences of loss() with respect to every coordinate of x.
inline ::testing::AssertionResult agrees_with_finite_differences(const std::vector<double>& analytic,
                                                                 std::vector<double>& x,
                                                                 const std::function<double()>& loss,
                                                                 double tolerance, const std::string& what,
                                                                 double h = 1e-5) {
  if (analytic.size() != x.size()) {
    return ::testing::AssertionFailure() << what << ": " << analytic.size() << " analytic values for "
                                         << x.size() << " coordinates";
  }
  const std::vector<std::size_t> all = every(x.size());
  return gradient_agrees(analytic.data(), all, numeric_gradient(x.data(), all, loss, h), tolerance, what);
}

}  // namespace sharp::test

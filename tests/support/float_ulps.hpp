#pragma once
// Float results against the double result rounded to float, in float ulps (tests of the float
// kernels). The ulp is that of the rounded double value. Two values both below FLT_MIN count as
// equal: float kernels may flush results below FLT_MIN to 0 (the float exp flushes there, as the
// double one does below DBL_MIN), an absolute error under 1.2e-38.
#include <cfloat>
#include <cmath>
#include <cstddef>

namespace sharp::test {

inline double float_ulps(float got, double want) {
  const float w = static_cast<float>(want);
  if (got == w) return 0.0;
  if (!std::isfinite(got) || !std::isfinite(w)) return INFINITY;
  if (std::fabs(got) < FLT_MIN && std::fabs(w) < FLT_MIN) return 0.0;
  const float a = std::fabs(w) < FLT_MIN ? FLT_MIN : std::fabs(w);
  const double ulp = std::nextafter(a, INFINITY) - a;
  return std::fabs(static_cast<double>(got) - static_cast<double>(w)) / ulp;
}

// The largest float_ulps over a row or batch; `at` gets its index.
inline double worst_float_ulps(const float* got, const double* want, std::size_t n, std::size_t* at = nullptr) {
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double u = float_ulps(got[i], want[i]);
    if (u > worst) {
      worst = u;
      if (at) *at = i;
    }
  }
  return worst;
}

}  // namespace sharp::test

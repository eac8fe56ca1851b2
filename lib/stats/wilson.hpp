#pragma once
// Wilson score interval of a binomial proportion (Wilson 1927): k successes of n trials at
// z = 1.959964 (95%), p = k/n,
//   centre = (p + z²/2n) / (1 + z²/n),  half = z·√(p(1−p)/n + z²/4n²) / (1 + z²/n).
// Unlike p ± z√(p(1−p)/n) it stays inside [0, 1] and is not degenerate at k = 0 or n. The same
// arithmetic, in the same order, as analysis/max_retrieval.py's wilson_interval.
#include <algorithm>
#include <cmath>

namespace sharp::stats {

struct Interval {
  double low, high;
};

// {NaN, NaN} when n = 0: no trials, no proportion (as the point estimate k/n).
inline Interval wilson_interval(double k, double n, double z = 1.959963984540054) {
  if (n <= 0) return {std::nan(""), std::nan("")};
  const double p = k / n, z2 = z * z;
  const double denom = 1.0 + z2 / n;
  const double centre = (p + z2 / (2 * n)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace sharp::stats

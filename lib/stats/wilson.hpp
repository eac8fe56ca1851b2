#pragma once
// Wilson score interval of a binomial proportion (Wilson 1927): successes k of n trials, z = 1.96
// for 95%. Unlike the normal approximation it stays inside [0, 1] and is not empty at k = 0 or n.
#include <cmath>
#include <utility>

namespace sharp::stats {

// {low, high}; {NaN, NaN} when n = 0.
inline std::pair<double, double> wilson_interval(double k, double n, double z = 1.959963984540054) {
  if (n <= 0) return {std::nan(""), std::nan("")};
  const double p = k / n, z2 = z * z;
  const double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace sharp::stats

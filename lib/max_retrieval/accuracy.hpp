#pragma once
// Accuracy with a Wilson score interval (Wilson 1927): for k correct of N at z = 1.959964 (95%),
//   centre = (p + z²/2N) / (1 + z²/N),  half = z·√(p(1−p)/N + z²/4N²) / (1 + z²/N).
// Unlike p ± z√(p(1−p)/N) it stays inside [0, 1] and is not degenerate at p = 0 or 1.
#include <cmath>
#include <algorithm>
#include <cstdint>

namespace sharp::max_retrieval {

struct Interval {
  double low, high;
};

inline Interval wilson_interval(std::int64_t correct, std::int64_t total, double z = 1.959963984540054) {
  if (total <= 0) return {0.0, 1.0};
  const double N = double(total), p = double(correct) / N, z2 = z * z;
  const double denom = 1.0 + z2 / N;
  const double centre = (p + z2 / (2 * N)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / N + z2 / (4 * N * N)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

}  // namespace sharp::max_retrieval

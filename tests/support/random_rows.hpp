#pragma once
// Random rows for the tests: one generator of each kind, so that "a random row" means the same
// values wherever a test says it.
//  - random_normal: N(0, sigma²) draws from std::mt19937_64 (libstdc++'s normal_distribution, fixed
//    for a toolchain). The seeded form starts a stream; the other continues the caller's (a fresh
//    distribution per call, so a call's values depend only on the engine's state).
//  - random_uniform: centre + half_width·(2u − 1) with u from the counter-based RNG
//    (rng/counter_rng.hpp): integer-exact, the same bits on every machine (pinned outputs use it).
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "rng/counter_rng.hpp"

namespace sharp::test {

inline std::vector<double> random_normal(std::size_t n, std::mt19937_64& rng, double sigma = 1.0) {
  std::normal_distribution<double> normal(0.0, sigma);
  std::vector<double> z(n);
  for (double& x : z) x = normal(rng);
  return z;
}

inline std::vector<double> random_normal(std::size_t n, std::uint64_t seed, double sigma = 1.0) {
  std::mt19937_64 rng(seed);
  return random_normal(n, rng, sigma);
}

inline std::vector<double> random_uniform(std::size_t n, std::uint64_t key, double half_width = 1.0,
                                          double centre = 0.0) {
  std::vector<double> z(n);
  rng::fill_uniform(key, 0, z.data(), n);
  for (double& v : z) v = centre + half_width * (2.0 * v - 1.0);
  return z;
}

}  // namespace sharp::test

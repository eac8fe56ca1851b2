#pragma once
// Random rows for the tests and benchmarks: one generator of each kind, so that "a random row"
// means the same values wherever a test says it.
//  - gaussian_row: N(0, sigma²) draws from std::mt19937_64 (libstdc++'s normal_distribution, fixed
//    for a toolchain). The seeded form starts a stream; the other continues the caller's.
//  - uniform_row: centre + half_width·(2u − 1) with u from the counter-based RNG
//    (random/counter_rng.hpp): integer-exact, the same bits on every machine.
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "random/counter_rng.hpp"

namespace sharp::testing {

inline std::vector<double> gaussian_row(std::size_t n, double sigma, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, sigma);
  std::vector<double> z(n);
  for (double& x : z) x = normal(rng);
  return z;
}

inline std::vector<double> gaussian_row(std::size_t n, double sigma, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  return gaussian_row(n, sigma, rng);
}

inline std::vector<double> uniform_row(std::size_t n, double half_width, double centre, std::uint64_t key) {
  std::vector<double> z(n);
  rng::fill_uniform(key, 0, z.data(), n);
  for (double& v : z) v = centre + half_width * (2.0 * v - 1.0);
  return z;
}

}  // namespace sharp::testing

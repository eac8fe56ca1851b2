// Gradients (docs/science.md#remedies): every backward — w.r.t. the logits and the normaliser's own parameters —
// against central finite differences of L = <v, p(z)> on random rows, several n and parameter
// values, away from support boundaries (the support must not change within +-10 h) and from the
// adaptive-temperature kinks. Error = max |analytic - fd| / max |fd| <= 1e-6 in double.
#include <algorithm>
#include <cmath>
#include <ostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/finite_differences.hpp"

#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/normaliser.hpp"

namespace {

using sharp::norm::make_normaliser;
using sharp::norm::Normaliser;
using sharp::norm::Spec;
using Row = std::vector<double>;

constexpr double kStep = 1e-5;
constexpr double kTolerance = 1e-6;
constexpr double kMasked = -std::numeric_limits<double>::infinity();

Row forward(const Normaliser& nz, const Row& z) {
  Row p(z.size());
  nz.forward(z.data(), p.data(), 1, z.size());
  return p;
}

double loss(const Normaliser& nz, const Row& z, const Row& v) {
  const Row p = forward(nz, z);
  double l = 0.0;
  for (std::size_t i = 0; i < z.size(); ++i) l += v[i] * p[i];
  return l;
}

std::vector<bool> support(const Row& p) {
  std::vector<bool> s(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) s[i] = p[i] > 0.0;
  return s;
}

// The row is safe for finite differences: the support is the same at z +- 10 h e_i for every i.
bool support_is_stable(const Normaliser& nz, const Row& z) {
  const auto s0 = support(forward(nz, z));
  for (std::size_t i = 0; i < z.size(); ++i) {
    if (z[i] == kMasked) continue;
    for (double sign : {-1.0, 1.0}) {
      Row zz = z;
      zz[i] += sign * 10 * kStep;
      if (support(forward(nz, zz)) != s0) return false;
    }
  }
  return true;
}

// Top-k / argmax: the k-th and (k+1)-th largest logits are well separated.
bool selection_is_stable(const Spec& spec, const Row& z) {
  if (spec.name != "topk" && spec.name != "argmax") return true;
  const std::size_t k = spec.name == "argmax" ? 1 : static_cast<std::size_t>(spec.param("k"));
  Row sorted;
  for (double x : z) {
    if (x != kMasked) sorted.push_back(x);
  }
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  if (k >= sorted.size()) return true;
  return sorted[k - 1] - sorted[k] > 1e-3;
}

bool away_from_adaptive_kinks(const Spec& spec, const Row& z) {
  if (spec.name != "adaptive") return true;
  const double h = sharp::norm::adaptive_row_beta(z.data(), z.size()).entropy;
  for (double kink : {0.5, 0.8486, 5.9445}) {
    if (std::fabs(h - kink) < 0.02) return false;
  }
  return true;
}

struct Case {
  std::string spec;
  double sigma;   // logits ~ N(0, sigma^2)
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.spec << " sigma=" << c.sigma; }

void check_gradients(const Case& c, std::size_t n, int masked, std::uint64_t seed) {
  SCOPED_TRACE(c.spec + " n=" + std::to_string(n) + " masked=" + std::to_string(masked) +
               " seed=" + std::to_string(seed));
  const Spec spec = sharp::norm::parse_spec(c.spec);
  const auto nz = make_normaliser(spec);
  std::mt19937_64 rng(seed);

  Row z;
  bool ok = false;
  for (int attempt = 0; attempt < 200 && !ok; ++attempt) {
    z = sharp::test::random_normal(n, rng, c.sigma);
    for (int m = 0; m < masked; ++m) z[(3 * m + 1) % n] = kMasked;
    ok = selection_is_stable(spec, z) && away_from_adaptive_kinks(spec, z) && support_is_stable(*nz, z);
  }
  ASSERT_TRUE(ok) << "no row away from support boundaries found";
  const Row v = sharp::test::random_normal(n, rng);

  const Row p = forward(*nz, z);
  Row grad_z(n);
  const std::size_t np = nz->parameter_names().size();
  Row grad_params(np);
  nz->backward(z.data(), p.data(), v.data(), grad_z.data(), grad_params.data(), 1, n);

  std::vector<std::size_t> unmasked;
  for (std::size_t i = 0; i < n; ++i) {
    if (z[i] == kMasked) {
      EXPECT_EQ(grad_z[i], 0.0) << "masked entry " << i;
    } else {
      unmasked.push_back(i);
    }
  }
  Row perturbed = z;
  const Row fd = sharp::test::numeric_gradient(perturbed.data(), unmasked, [&] { return loss(*nz, perturbed, v); }, kStep);
  // Locally constant p (one index selected, or a sparse support of one entry): the gradient is
  // exactly 0, which a relative comparison cannot check.
  const bool one_entry = std::count_if(p.begin(), p.end(), [](double x) { return x > 0.0; }) == 1;
  if (spec.name == "argmax" || (spec.name == "topk" && spec.param("k") == 1.0) || one_entry) {
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(grad_z[i], 0.0);
    for (double d : fd) EXPECT_LE(std::fabs(d), 1e-12);
  } else {
    EXPECT_TRUE(sharp::test::gradient_agrees(grad_z.data(), unmasked, fd, kTolerance, "dL/dz"));
  }

  const auto names = nz->parameter_names();
  for (std::size_t j = 0; j < names.size(); ++j) {
    const double value = spec.param(names[j]);
    const double h = kStep * std::max(1.0, std::fabs(value));
    if (spec.name == "entmax" && value + h > 2.0) continue;   // alpha = 2: no central difference
    double x = value;
    const double fd_param = sharp::test::numeric_gradient(&x, {0}, [&] {
      Spec at = spec;
      at.params[names[j]] = x;
      return loss(*make_normaliser(at), z, v);
    }, h)[0];
    EXPECT_LE(std::fabs(grad_params[j] - fd_param), kTolerance * std::max(std::fabs(fd_param), 1e-3))
        << "dL/d" << names[j] << ": analytic " << grad_params[j] << " fd " << fd_param;
  }
}

class Gradients : public ::testing::TestWithParam<Case> {};

TEST_P(Gradients, MatchFiniteDifferences) {
  std::uint64_t seed = 1;
  for (std::size_t n : {2, 5, 16, 100}) {
    for (int masked : {0, 1}) {
      if (masked && n < 5) continue;
      check_gradients(GetParam(), n, masked, seed++);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Family, Gradients,
    ::testing::Values(Case{"softmax", 1.0}, Case{"softmax:beta=0.25", 2.0}, Case{"softmax:beta=4", 0.5},
                      Case{"ssmax:s=1", 1.0}, Case{"ssmax:s=0.43", 2.0},
                      Case{"adaptive", 1.0}, Case{"adaptive", 0.3}, Case{"adaptive", 3.0},
                      Case{"topk:k=3", 1.0}, Case{"argmax", 1.0},
                      Case{"sparsemax", 1.0}, Case{"entmax15", 1.0}, Case{"entmax15", 3.0},
                      Case{"entmax:alpha=1.25", 1.0}, Case{"entmax:alpha=1.5", 1.0},
                      Case{"entmax:alpha=1.75", 2.0}, Case{"entmax:alpha=2", 1.0},
                      Case{"asentmax:b=0.5:gamma=1", 1.0}, Case{"asentmax:b=1:gamma=0.5:delta=0.5", 1.0},
                      Case{"asentmax:b=2:gamma=-0.7:delta=0.2", 0.5},
                      Case{"stieltjes:q=1", 1.0}, Case{"stieltjes:q=4", 1.0}, Case{"stieltjes:q=2.5", 2.0},
                      Case{"stieltjes:q=16", 0.5}),
    [](const auto& info) {
      std::string name = info.param.spec + "_" + std::to_string(info.index);
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

// The adaptive rows above must exercise all three regimes of beta(H): gate closed (H <= 0.5),
// polynomial (beta > 1, the gradient through beta), and clamped (large H, beta = 1).
TEST(Gradients, AdaptiveRegimesAreCovered) {
  std::mt19937_64 rng(7);
  int closed = 0, active = 0, clamped = 0;
  for (double sigma : {0.3, 1.0, 3.0}) {
    for (std::size_t n : {2, 5, 16, 100}) {
      const Row z = sharp::test::random_normal(n, rng, sigma);
      const double h = sharp::norm::adaptive_row_beta(z.data(), n).entropy;
      closed += h <= 0.5;
      active += sharp::norm::adaptive_beta_derivative(h) != 0.0;
      clamped += h > 5.9445;
    }
  }
  EXPECT_GT(active, 0);
  EXPECT_GT(closed + clamped, 0);
}

}  // namespace

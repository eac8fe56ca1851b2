#include "normalisers/sparse_thresholds.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/errors.hpp"

namespace sharp::norm {
namespace {

// Copies the entries with w > bound into out; returns how many.
std::size_t keep_above(const double* w, std::size_t n, double bound, double* out) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < n; ++i) {
    out[k] = w[i];
    k += w[i] > bound;
  }
  return k;
}

}  // namespace

double power(double x, double r) {
  if (r == 1.0) return x;
  if (r == 2.0) return x * x;
  if (r == std::floor(r) && r <= 64.0) {
    auto e = static_cast<unsigned>(r);
    double result = 1.0, base = x;
    while (e != 0) {
      if (e & 1u) result *= base;
      base *= base;
      e >>= 1;
    }
    return result;
  }
  return std::pow(x, r);
}

double sparsemax_threshold(const double* w, std::size_t n, Workspace& ws) {
  double* a = ws.doubles(0, n);
  std::size_t k = keep_above(w, n, -1.0, a);  // tau >= max w - 1 = -1
  double tau = -1.0;
  while (true) {
    double sum = 0.0;
    for (std::size_t i = 0; i < k; ++i) sum += a[i];
    tau = (sum - 1.0) / static_cast<double>(k);
    const std::size_t kept = keep_above(a, k, tau, a);
    if (kept == k || kept == 0) break;  // kept == 0 only through rounding; tau is then final
    k = kept;
  }
  return tau;
}

double sparsemax_threshold_sorted(const double* w, std::size_t n, Workspace& ws) {
  double* a = ws.doubles(0, n);
  std::copy(w, w + n, a);
  std::sort(a, a + n, std::greater<double>());
  double cumsum = 0.0, tau = a[0] - 1.0;
  for (std::size_t k = 0; k < n && a[k] > -1.0; ++k) {
    cumsum += a[k];
    const double t = (cumsum - 1.0) / static_cast<double>(k + 1);
    if (a[k] > t) tau = t;  // support size k+1 is feasible; the largest feasible one wins
  }
  return tau;
}

double entmax15_threshold_sorted(const double* w, std::size_t n, Workspace& ws) {
  double* a = ws.doubles(0, n);
  std::copy(w, w + n, a);
  std::sort(a, a + n, std::greater<double>());
  // Welford's running mean and M2 over the k largest entries avoid the cancellation of ss - mean^2.
  double mean = 0.0, m2 = 0.0, tau = a[0] - 1.0;
  for (std::size_t k = 0; k < n && a[k] > -1.0; ++k) {
    const double count = static_cast<double>(k + 1);
    const double delta = a[k] - mean;
    mean += delta / count;
    m2 += delta * (a[k] - mean);
    const double disc = (1.0 - m2) / count;
    if (disc < 0.0) break;
    const double t = mean - std::sqrt(disc);
    if (t <= a[k]) tau = t;
  }
  return tau;
}

double entmax15_threshold(const double* w, std::size_t n, Workspace& ws) {
  double* a = ws.doubles(1, n);
  std::size_t k = keep_above(w, n, -1.0, a);
  double lower = -1.0;  // f(lower) >= 0: lower <= tau
  for (int iteration = 0; iteration < 100; ++iteration) {
    const double count = static_cast<double>(k);
    double sum = 0.0, min = 0.0;
    for (std::size_t i = 0; i < k; ++i) {
      sum += a[i];
      min = std::min(min, a[i]);
    }
    const double mean = sum / count;
    double m2 = 0.0, shifted = 0.0, shifted2 = 0.0;
    for (std::size_t i = 0; i < k; ++i) {
      const double d = a[i] - mean;
      m2 += d * d;
      const double s = a[i] - lower;
      shifted += s;
      shifted2 += s * s;
    }
    const double disc = (1.0 - m2) / count;
    if (disc >= 0.0) {
      const double tau = mean - std::sqrt(disc);
      if (tau >= lower && min >= tau) return tau;
    }
    // Newton from the left on f(t) = sum (a - t)^2 - 1 (every a > lower, so no clipping).
    const double next = lower + (shifted2 - 1.0) / (2.0 * shifted);
    if (!(next > lower)) break;  // rounding stalled: finish exactly by sorting
    lower = next;
    const std::size_t kept = keep_above(a, k, lower, a);
    if (kept == 0) break;
    k = kept;
  }
  return entmax15_threshold_sorted(a, k, ws);
}

RootResult entmax_threshold(const double* w, std::size_t n, std::size_t unmasked, double alpha, RootMethod method,
                            double tolerance, Workspace& ws) {
  const double r = 1.0 / (alpha - 1.0);
  double* a = ws.doubles(0, n);
  std::size_t k = keep_above(w, n, -1.0, a);
  // f and f' at t over the candidates (entries <= t contribute 0).
  auto f = [&](double t, double* derivative) {
    double sum = -1.0, d = 0.0;
    for (std::size_t i = 0; i < k; ++i) {
      const double x = a[i] - t;
      if (x > 0.0) {
        const double xr1 = power(x, r - 1.0);
        sum += xr1 * x;
        d += xr1;
      }
    }
    if (derivative) *derivative = -r * d;
    return sum;
  };
  auto raised_lower = [&](double lo) { k = keep_above(a, k, lo, a); };
  const double hi = -std::pow(static_cast<double>(unmasked), 1.0 - alpha);
  return find_root_convex_decreasing(f, raised_lower, -1.0, hi, method, tolerance);
}

}  // namespace sharp::norm

#pragma once
// A root of a convex, decreasing function f on a bracket [lo, hi] with f(lo) >= 0 >= f(hi): the
// equation behind alpha-entmax's threshold and the Stieltjes shift (docs/science.md#remedies).
//  - Bisection halves the bracket until it is narrower than `tolerance`.
//  - SafeguardedNewton steps from the left end: for a convex decreasing f a Newton step from a point
//    with f >= 0 never passes the root, so every iterate is a new lower bound. A bisection step is
//    added whenever a Newton step fails to halve f (far from the root on a steep f, e.g. large
//    1/(alpha-1) or q). Stops when f(lo) <= tolerance.
// Both stop when the bracket or the Newton step reaches the resolution of doubles near lo (rounding
// in f then dominates), so they always terminate; `evaluations` counts calls of f.
#include <algorithm>
#include <cmath>

#include "core/errors.hpp"

namespace sharp::norm {

enum class RootMethod { Bisection, SafeguardedNewton };

struct RootResult {
  double root;  // the final lower end of the bracket (Newton) or its midpoint (bisection)
  int evaluations;
};

// f(x, &derivative) returns f(x) and sets f'(x) (derivative may be null for bisection).
// raised_lower(x) is called whenever the lower end rises to x (callers prune work with it).
template <class F, class Raised>
RootResult find_root_convex_decreasing(F&& f, Raised&& raised_lower, double lo, double hi, RootMethod method,
                                       double tolerance) {
  constexpr int kMaxEvaluations = 400;
  int evaluations = 0;
  auto resolution = [&] { return 4e-16 * std::max(1.0, std::fabs(lo)); };
  auto eval = [&](double x, double* d) {
    ++evaluations;
    return f(x, d);
  };
  if (method == RootMethod::Bisection) {
    while (hi - lo > std::max(tolerance, resolution()) && evaluations < kMaxEvaluations) {
      const double mid = 0.5 * (lo + hi);
      if (eval(mid, nullptr) >= 0.0) {
        lo = mid;
        raised_lower(lo);
      } else {
        hi = mid;
      }
    }
    return {0.5 * (lo + hi), evaluations};
  }
  double dlo = 0.0;
  double flo = eval(lo, &dlo);
  while (flo > tolerance && hi - lo > resolution() && evaluations < kMaxEvaluations) {
    double t = lo - flo / dlo;
    if (!(t - lo >= resolution())) break;  // the step is below what doubles resolve near lo
    if (!(t < hi)) t = 0.5 * (lo + hi);
    double dt = 0.0;
    const double ft = eval(t, &dt);
    const bool slow = !(ft >= 0.0) || ft > 0.5 * flo;
    if (ft >= 0.0) {
      lo = t, flo = ft, dlo = dt;
      raised_lower(lo);
    } else {
      hi = t;  // only through rounding: Newton from the left never passes the root
    }
    if (slow && flo > tolerance && hi - lo > resolution()) {
      const double mid = 0.5 * (lo + hi);
      double dm = 0.0;
      const double fm = eval(mid, &dm);
      if (fm >= 0.0) {
        lo = mid, flo = fm, dlo = dm;
        raised_lower(lo);
      } else {
        hi = mid;
      }
    }
  }
  if (evaluations >= kMaxEvaluations) throw NumericError("root finding did not converge");
  return {lo, evaluations};
}

}  // namespace sharp::norm

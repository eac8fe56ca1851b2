#pragma once
// OnlineSoftmax: the running statistics of a softmax whose logits arrive in parts — the one type
// behind every one-pass softmax of the library (the softmax-family row kernels, the streamed
// statistics of normalisers/softmax_stream, the dispersion row, online attention).
// docs/science.md#streaming-entropy.
//
// For logits z_k (−inf: masked, weight 0), a scale c (β; 1 when the logits come scaled) and a
// reference point r = `shift` (in the logits' units; any r is exact in theory, r at or near the max
// keeps the terms in range), with base b = e or 2:
//   s = Σ_k b^(c (z_k − r)),   t = Σ_k c (z_k − r)·b^(c (z_k − r))   (t in base-b units, ≤ 0 if r ≥ max),
//   ln Σ_k e^(c z_k) = c r ln b + ln s   (log_sum_exp),
//   H = ln s − (ln b)·t/s nats          (entropy),
//   softmax(c z)_k = b^(c (z_k − r))/s   (weight).
// Moving the reference to r' multiplies by f = b^d, d = c (r − r'):  s ← f s,  t ← f (t + d s)
// (rescale_to; it returns f, so that a caller's own accumulators, e.g. an attention output
// Σ_k b^(c (z_k − r)) v_k, follow). Parts of a row merge in index order (merge(later)): a row cut
// into fixed blocks gives the same bits for any thread count.
//
// Base 2 is for kernels built on exp2 (core/simd_exp.hpp), which sum 2^y and y·2^y for
// y = c (z − r) with c including log2(e). Sum = double (plain) or CompensatedSum (Neumaier: a
// stream of 2^30 terms keeps a few ulp, where a plain running sum loses n·eps).
//
// Hot loops do not add terms one by one: they sum a chunk in SIMD lanes relative to `shift` and
// hand the totals over (add_sums), after rescale_to when the chunk raises the reference; `max` is
// theirs to keep (a pass that does not track the max leaves it −inf). Empty (no reference yet):
// shift = −inf, sums 0. Arithmetic is written with explicit fma where it fuses, so the bits do not
// depend on the compiler's contraction choices.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/compensated_sum.hpp"
#include "core/errors.hpp"
#include "core/simd_exp.hpp"

namespace sharp {

enum class ExpBase { E, Two };

namespace online_softmax_detail {
inline double total(double x) { return x; }
inline double total(const CompensatedSum& x) { return x.total(); }
inline void add_to(double& acc, double x) { acc += x; }
inline void add_to(CompensatedSum& acc, double x) { acc.add(x); }
// f (t + d s), exactly 0 when f is: a part whose factor underflows (its reference lies > 745 below,
// e.g. blocks 1e300 apart) adds nothing, where d s could overflow (−1e300 × e^500) and 0·−inf is NaN.
inline double rescaled_weighted(double f, double t, double d, double s) {
  return f == 0.0 ? 0.0 : f * std::fma(d, s, t);
}
// s ← f s, t ← f (t + d s), on each part of a compensated pair.
inline void rescale(double& s, double& t, double d, double f) {
  t = rescaled_weighted(f, t, d, s);
  s *= f;
}
inline void rescale(CompensatedSum& s, CompensatedSum& t, double d, double f) {
  rescale(s.sum, t.sum, d, f);
  rescale(s.comp, t.comp, d, f);
}
}  // namespace online_softmax_detail

template <ExpBase kBase = ExpBase::E, class Sum = double>
struct OnlineSoftmax {
  static_assert(std::is_same_v<Sum, double> || std::is_same_v<Sum, CompensatedSum>);
  static constexpr double kLnBase = kBase == ExpBase::E ? 1.0 : 0.693147180559945309417;  // ln b

  // The library's exp in base b (a scalar lane of core/simd_exp.hpp), for rescale factors.
  struct LibraryExp {
    double operator()(double d) const { return kBase == ExpBase::E ? simd::exp(d) : simd::exp2(d); }
  };

  double shift = -std::numeric_limits<double>::infinity();  // r
  double max = -std::numeric_limits<double>::infinity();  // largest logit seen (if tracked)
  Sum sum{};  // s
  Sum weighted{};  // t

  bool empty() const { return shift == -std::numeric_limits<double>::infinity(); }
  double total_sum() const { return online_softmax_detail::total(sum); }
  double total_weighted() const { return online_softmax_detail::total(weighted); }

  // Sums of a chunk's terms taken relative to `shift` (the caller keeps `max`).
  void add_sums(double s, double t) {
    online_softmax_detail::add_to(sum, s);
    online_softmax_detail::add_to(weighted, t);
  }

  // Moves the reference to new_shift (an empty state just takes it) and returns the factor f the
  // sums were multiplied by (1 if empty). exp_b must be b^x; by default the library's. A caller
  // whose terms come from another exp passes that one, so that its factors and terms agree.
  template <class Exp = LibraryExp>
  double rescale_to(double new_shift, double scale = 1.0, Exp exp_b = {}) {
    if (empty()) {
      shift = new_shift;
      return 1.0;
    }
    const double d = scale * (shift - new_shift);
    const double f = exp_b(d);
    online_softmax_detail::rescale(sum, weighted, d, f);
    shift = new_shift;
    return f;
  }

  // One logit z (finite or −inf), for scalar loops and tests (hot loops use add_sums): raises the
  // reference to z if z is above it, then adds z's term. Returns the factor the earlier sums were
  // multiplied by (1 if none).
  double add(double z, double scale = 1.0) {
    if (z == -std::numeric_limits<double>::infinity()) return 1.0;
    const double f = z > shift ? rescale_to(z, scale) : 1.0;
    const double u = scale * (z - shift);
    const double w = LibraryExp{}(u);
    if constexpr (std::is_same_v<Sum, double>) {
      sum += w;
      weighted = std::fma(u, w, weighted);
    } else {
      add_sums(w, u * w);
    }
    max = std::max(max, z);
    return f;
  }

  // Appends the statistics of the logits after this state's (same scale): both are moved to the
  // larger reference, then added. Plain sums fuse one side's rescale into the add of s
  // (s = fma(f_a, s_a, f_b s_b)), not of t; compensated sums rescale the lower side, then add with
  // compensation.
  void merge(const OnlineSoftmax& later, double scale = 1.0) {
    const double m = std::max(max, later.max);
    if (!later.empty()) {
      if (empty()) {
        shift = later.shift;
        sum = later.sum;
        weighted = later.weighted;
      } else if constexpr (std::is_same_v<Sum, double>) {
        const double common = std::max(shift, later.shift);
        const double da = scale * (shift - common), db = scale * (later.shift - common);
        const double fa = LibraryExp{}(da), fb = LibraryExp{}(db);
        weighted = online_softmax_detail::rescaled_weighted(fa, weighted, da, sum) +
                   online_softmax_detail::rescaled_weighted(fb, later.weighted, db, later.sum);
        sum = std::fma(fa, sum, fb * later.sum);
        shift = common;
      } else {
        OnlineSoftmax other = later;
        if (other.shift > shift) {
          rescale_to(other.shift, scale);
        } else if (other.shift < shift) {
          other.rescale_to(shift, scale);
        }
        sum.merge(other.sum);
        weighted.merge(other.weighted);
      }
    }
    max = m;
  }

  // ln Σ_k e^(c z_k); −inf when empty.
  double log_sum_exp(double scale = 1.0) const {
    if (empty()) return -std::numeric_limits<double>::infinity();
    return std::fma(scale * kLnBase, shift, std::log(total_sum()));
  }

  // H = ln s − (ln b)·t/s in nats; throws sharp::NumericError for an empty or fully masked row.
  double entropy() const {
    const double s = total_sum();
    if (!(s > 0.0)) throw NumericError("softmax entropy of an empty or fully masked row");
    if constexpr (kBase == ExpBase::E) {
      return std::log(s) - total_weighted() / s;
    } else {
      return std::log(s) - kLnBase * total_weighted() / s;
    }
  }

  // softmax weight b^u/s of a logit whose exponent u = c (z − r) the caller formed (e.g. fused,
  // fma(β, e, −r), as its own hot loop forms it); 0 when empty. b^u by the C library (exp, exp2).
  double weight_at(double u) const {
    if (empty()) return 0.0;
    return (kBase == ExpBase::E ? std::exp(u) : std::exp2(u)) / total_sum();
  }
  // softmax(c z)_k for a logit z of this row.
  double weight(double z, double scale = 1.0) const { return weight_at(scale * (z - shift)); }
};

}  // namespace sharp

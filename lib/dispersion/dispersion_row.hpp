#pragma once
// One row of the dispersion check (docs/science.md#dispersion-lemma): n logits of a law on [0, δ] streamed through
// softmax_θ without being stored, and the row's extreme coefficients, entropy and bound violations.
#include <cstdint>

#include "core/compensated_sum.hpp"
#include "core/online_softmax.hpp"
#include "dispersion/dispersion_bounds.hpp"
#include "dispersion/logit_laws.hpp"

namespace sharp::dispersion {

// Relative tolerance of the violation test: α_k counts as a violation when
// α_k > bound_upper·(1 + 1e-12) or α_k < bound_lower·(1 − 1e-12). It absorbs the rounding of the
// computed coefficients (δ = 0 puts every α_k exactly on both bounds).
inline constexpr double kViolationTolerance = 1e-12;

struct DispersionRow {
  double alpha_max;  // largest softmax_θ coefficient of the row
  double alpha_min;  // smallest
  double entropy;  // nats
  std::uint64_t violations;  // coefficients outside the lemma's bounds (kViolationTolerance)
};

// The row's logits, cut into blocks of kDispersionBlock; the sizes are part of the result's
// definition (the blocks' statistics merge in block order), not tuning knobs of one run.
inline constexpr std::uint64_t kDispersionBlock = std::uint64_t{1} << 16;

// The softmax statistics of a row, in base-2 units relative to the top of the logits' range:
// y = (z − top)·log2(e) for the logits z = e/θ and top = δ/θ, so every y lies in [−top·log2(e), 0]
// (logit_lanes.hpp says how each law forms y). With the reference r = `shift`, s = Σ 2^(y − r) and
// t = Σ (y − r)·2^(y − r), so softmax_θ(e)_k = 2^(y_k − r)/s and H = ln s − ln 2·t/s for any r.
// r is 0, the top (one pass, no max needed first), unless that would cost accuracy; then the sums
// are redone with r = y_max (see dispersion_row.cpp).
struct RowStatistics {
  double top;  // δ/θ
  double y_min;  // the smallest y
  // shift r (0 or y_max), max = y_max, s and t (≤ 0), in base 2 with scale 1.
  OnlineSoftmax<ExpBase::Two, CompensatedSum> softmax;

  double y_max() const { return softmax.max; }
  double alpha_max() const { return softmax.weight(softmax.max); }  // 2^(y_max − r)/s
  double alpha_min() const { return softmax.weight(y_min); }  // 2^(y_min − r)/s
  double entropy() const { return softmax.entropy(); }  // ln s − ln 2·t/s, nats
};

// Streams the n logits of one row (never stored: O(1) memory per thread) through softmax_θ.
// `threads` OpenMP threads share the row; block results are merged in block order, so the result is
// bit-identical for any `threads`. Memory stays bounded for any n (block results are held for at
// most 1024 blocks at a time).
// Violations: the extremes are checked first; only if one violates, another pass regenerates the
// row (counter-based, so the same logits) and counts every violating coefficient, on y:
// α_k > U' ⇔ y_k > r + log2(s·U').
// Throws sharp::BadInput for n == 0, spread < 0 or not finite, theta <= 0 or not finite, threads < 1.
DispersionRow dispersion_row(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key,
                             int threads);

// The statistics that dispersion_row summarises.
RowStatistics row_statistics(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key,
                             int threads);

// How many coefficients of the row lie outside [lower, upper], given the row's statistics `row`
// (from row_statistics with the same arguments): one more pass that regenerates the logits and
// compares each y with r + log2(s·bound) — only when the extremes show that some coefficient is outside.
std::uint64_t count_outside(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key, int threads,
                            const RowStatistics& row, double lower, double upper);

}  // namespace sharp::dispersion

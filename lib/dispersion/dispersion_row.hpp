#pragma once
// One row of the dispersion check (SPEC §2 item 1): n logits of a law on [0, δ] streamed through
// softmax_θ without being stored, and the row's extreme coefficients, entropy and bound violations.
#include <cstdint>

#include "dispersion/dispersion_bounds.hpp"
#include "dispersion/logit_laws.hpp"
#include "stats/softmax_stream.hpp"

namespace sharp::dispersion {

// Relative tolerance of the violation test: α_k counts as a violation when
// α_k > bound_upper·(1 + 1e-12) or α_k < bound_lower·(1 − 1e-12). It absorbs the rounding of the
// computed coefficients (δ = 0 puts every α_k exactly on both bounds).
inline constexpr double kViolationTolerance = 1e-12;

struct DispersionRow {
  double alpha_max;          // largest softmax_θ coefficient of the row
  double alpha_min;          // smallest
  double entropy;            // nats
  std::uint64_t violations;  // coefficients outside the lemma's bounds (kViolationTolerance)
};

// The row's logits, cut into blocks of kDispersionBlock; the sizes are part of the result's
// definition (the blocks' statistics merge in block order), not tuning knobs of one run.
inline constexpr std::uint64_t kDispersionBlock = std::uint64_t{1} << 16;

// Streams the n logits of one row (never stored: O(chunk) memory per thread) through softmax_θ,
// z = e·(1/θ). `threads` OpenMP threads share the row; block statistics are merged in block order,
// so the result is bit-identical for any `threads`. Memory stays bounded for any n (block
// statistics are held for at most 1024 blocks at a time).
// Violations: the extremes are checked first; only if one violates, a second pass regenerates the
// row (counter-based, so the same logits) and counts every violating coefficient. Both tests are
// done on z: α_k > U' ⇔ z_k > max z + ln(s·U'), with s = Σ exp(z − max z).
// Throws sharp::BadInput for n == 0, spread < 0 or not finite, theta <= 0 or not finite, threads < 1.
DispersionRow dispersion_row(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key,
                             int threads);

// The softmax statistics of the whole row (max and min of z, s, t): what dispersion_row summarises.
stats::SoftmaxStream dispersion_stream(LogitLaw law, std::uint64_t n, double spread, double theta,
                                       std::uint64_t key, int threads);

// How many coefficients of the row lie outside [lower, upper], given the row's statistics `row`
// (from dispersion_stream with the same arguments): one more pass that regenerates the logits and
// compares each z with max z + ln(s·bound).
std::uint64_t count_outside(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key,
                            int threads, const stats::SoftmaxStream& row, double lower, double upper);

}  // namespace sharp::dispersion

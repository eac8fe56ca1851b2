#pragma once
// One block of a dispersion row in one fused pass: the law's logits are made on SIMD lanes
// (logit_lanes.hpp) and go straight into exp and the sums, batch by batch in registers; no chunk
// of logits is stored and reloaded (except the uniform law's top pass, which stages its random
// numbers through an L1 buffer to overlap scalar and vector work: uniform_draws.hpp). Every pass
// works on y = (z − z_top)·log2(e) ∈ [−C, 0] (C = (δ/θ)·log2(e)); weights are 2^y. The kinds of
// pass differ only in what they accumulate. Sums are kept in SIMD lanes over sub-chunks of
// kSubChunk logits (256 terms per lane) and each sub-chunk's total enters a compensated sum, so the
// error does not grow with n.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/compensated_sum.hpp"
#include "core/online_softmax.hpp"
#include "dispersion/logit_laws.hpp"

namespace sharp::dispersion {

// The largest δ/θ for which sums are taken relative to the top (PassKind::SumsFromTop): every
// weight e^(z − z_top) ≥ e^−600 ≈ 3.8e-261 is then a normal double, far from exp's flush near e^−708.
inline constexpr double kMaxTopRelativeSpread = 600.0;

enum class PassKind {
  SumsFromTop,  // s = Σ 2^y, t = Σ y·2^y and the extremes of y (needs δ/θ ≤ kMaxTopRelativeSpread)
  Extremes,  // the extremes of y only (no exp)
  SumsFromShift,  // s = Σ 2^(y−shift), t = Σ (y−shift)·2^(y−shift) for shift ≥ every y; a weight
  // below 2^−1021 (negligible next to the one of weight 1) counts as 0
  CountOutside,  // how many y lie outside [low, high]
};

struct Pass {
  PassKind kind;
  double shift = 0.0;  // SumsFromShift
  double low = 0.0;  // CountOutside
  double high = 0.0;
};

// The softmax statistics of a block in base 2 (y is already scaled: scale 1): softmax.shift is the
// pass's reference (0 for SumsFromTop, Pass::shift for SumsFromShift; −inf, i.e. no sums, for the
// other passes), s = Σ 2^(y − shift), t = Σ (y − shift)·2^(y − shift), softmax.max = y_max
// (SumsFromTop, Extremes; −inf where not tracked).
struct BlockResult {
  OnlineSoftmax<ExpBase::Two, CompensatedSum> softmax;
  double y_min = std::numeric_limits<double>::infinity();  // SumsFromTop, Extremes
  std::uint64_t outside = 0;  // CountOutside

  // Appends the result of the block that follows (the merge order is part of the result's bits).
  void merge(const BlockResult& later);
};

inline constexpr std::size_t kSubChunk = 1024;

// The pass over logits [first, first + count) of the row of law `law`, stream `key`,
// C = (δ/θ)·log2(e). `first` must be a multiple of kSubChunk (blocks are). The row's length does
// not enter: the logits are a function of (law, key, index); the fixed ones sit at indices 0 and 1.
BlockResult block_pass(LogitLaw law, std::uint64_t key, double C, const Pass& pass, std::uint64_t first,
                       std::uint64_t count);

}  // namespace sharp::dispersion

#pragma once
// One block of a float row of the softmax family, computed in float lanes (core/simd_exp_float.hpp:
// twice the lanes of a double batch) and accumulated in double. The float twin of the double lanes'
// block pass in softmax_kernels.cpp, used by it for float rows of more than kNarrowRow entries.
//
// Why the reduction is split: a float y = beta log2(e) (z − shift) carries an absolute error up to
// |y|·2^-24, which 2^y turns into a relative error of |y| ulp (70 ulp at y = −100). So y is never
// rounded to float. The reference c = shift·beta·log2(e) is rounded to a multiple of 1/8 (its
// residual d, |d| ≤ 1/16, is corrected per block as the double kernel's fused shift does), the
// scale to a float pair s_hi + s_lo, and then
//   t = fma(z, s_hi, shifter − c)   (round(8(z s_hi − c)) = 8k + j in t's low bits, exact shifter − c),
//   m = t − (shifter − c)           (= k + j/8 + c, exact),
//   f = fma(z, s_lo, fma(z, s_hi, −m))   (the fused product rounds once, |f| ≤ 1/16 + |z s_lo|),
// and 2^y = 2^k·2^(j/8)·2^f as in the exp. Entries far below the reference (masked ones included)
// are clamped so that k = −127, where the table gives exactly 0. Valid while |c| < 2^18 (|z| up to
// about 1.8e5/beta); beyond, or for beta ≤ 0, the caller uses its double lanes.
//
// Sums: every term's e goes into double accumulators, in pairs of float batches added in float
// first when only the sum is wanted (one rounding of 2^-24 relative per pair). The weighted sum
// (entropy, adaptive beta) needs y to double precision: with kWeighted each batch's z is widened
// and y·e accumulated in double (adaptive's beta, a polynomial in the entropy, moves every weight
// by (z − mean) dbeta: a float entropy would cost the tail weights tens of ulp).
#include <cstddef>

namespace sharp::norm::detail {

struct FloatBlockSums {
  bool applicable = false;   // false: shift·beta too large, or beta ≤ 0 (nothing computed)
  double max = 0.0;          // max z of the block (NaN lanes may be dropped; +inf kept)
  double sum = 0.0;          // Σ 2^(y + d) relative to the rounded reference c, i.e. 2^d Σ e^(beta (z − shift))
  double weighted = 0.0;     // Σ (y + d)·2^(y + d) in base-2 units (only with kWeighted; else 0)
  double residual = 0.0;     // d = shift·beta·log2(e) − c: the terms carry 2^d
};

// Terms 2^(y + d) of z[0, len) relative to `shift`, stored into p when kStore, and their sums.
template <bool kStore, bool kWeighted>
FloatBlockSums float_block_pass(const float* z, float* p, std::size_t len, double beta, double shift);

}  // namespace sharp::norm::detail

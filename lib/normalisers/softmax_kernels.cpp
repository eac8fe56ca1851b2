#include "normalisers/softmax_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/parallel_for.hpp"
#include "core/simd_exp.hpp"
#include "normalisers/row_checks.hpp"
#include "normalisers/simd_io.hpp"
#include "normalisers/softmax_float_block.hpp"

namespace sharp::norm {
namespace {

using simd::batch_d;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.693147180559945309417;
constexpr std::size_t kPrefetchAhead = 256;   // entries

struct BlockResult {
  OnlineSoftmax<> stats;
  bool bad = false;          // NaN or +inf somewhere in the block
  double stored_log2 = 0.0;  // stored terms are 2^stored_log2 exp(beta (z - shift)) (see kFmaShift)
};

// 2^x for the residuals d of the fused shift (|x| ≤ 1/8, usually ~1e-15): a glibc call costs as
// much as a 16-entry row's exps, so tiny x (the normal case: |c| < 2^24) takes two Taylor terms,
// whose remainder (x ln 2)^3/6 < 2^-80 is below the final rounding.
inline double pow2_of_residual(double x) {
  if (std::fabs(x) >= 0x1p-28) return std::exp2(x);
  const double u = x * kLn2;
  return 1.0 + std::fma(0.5 * u, u, u);
}

// exp(beta (z - shift)) = 2^y with y = (z - shift) (beta log2 e): base 2, so the argument reduction
// inside exp2 is exact and needs no multiply (core/simd_exp.hpp; log2 e rides on beta's multiply).
// Summed (and stored into p when kStore) in one pass that also finds the block's max; the sum of
// y 2^y times ln 2 is the weighted sum t of docs/science.md#streaming-entropy. y is clamped at kExp2Zero, where exp2_in_range gives
// exactly 0: masked entries (-inf) and entries below 2^-1023 of the reference weigh exactly 0, with
// no select (2 operations per batch fewer when storing). max(lowest, NaN) is NaN (x86 returns the
// second operand), so a NaN or +inf logit makes the sums NaN — checked once per block, not per entry.
//
// kFmaShift: y = fma(z, scale, -c) with c = shift·scale rounded, one operation instead of a subtract
// and a multiply (every vector operation counts here, see below). It computes y' = y + d rounded
// once, where d = shift·scale − c is the exact residual of c (TwoProduct by fma), the same for every
// entry: so 2^y' = 2^d 2^y, and the block's sums are corrected exactly, sum = 2^-d Σ2^y' and
// Σy2^y = 2^-d (Σy'2^y' − d Σ2^y'). Stored terms keep their 2^d (stored_log2 = d), which the
// normalising pass divides out. Used while |c| ≤ 2^50 (|d| ≤ 1/8); for larger logits (|z| ≳ 1e15,
// e.g. ±1e30) d could leave exp2's domain, so those blocks subtract first.
//
// One accumulator pair: an exp costs far more than the adds' latency, and with exp2's constants a
// second pair no longer fits in the 16 registers. Per batch of 4 (kFmaShift): 10 FMA-pipe operations
// (8 in exp2) and 12 others, of which 8 (max, clamp, adds, shifts) share the 2 add pipes of Zen 5.
template <class T, bool kStore, bool kFmaShift>
BlockResult block_pass_with_shift(const T* z, T* p, std::size_t len, double beta, double shift) {
  const double scale_d = beta * sharp::simd::kLog2e;
  const double c = shift * scale_d;
  const double d = kFmaShift ? std::fma(shift, scale_d, -c) : 0.0;   // shift·scale = c + d exactly
  const batch_d sb(shift), minus_c(-c), scale(scale_d), lowest(sharp::simd::kExp2Zero);
  batch_d mx(kNegInf), s(0.0), t(0.0);
  // 2^y of one batch, added to the sums.
  auto term = [&](batch_d x) {
    mx = xsimd::max(mx, x);
    const batch_d y = xsimd::max(lowest, kFmaShift ? xsimd::fma(x, scale, minus_c) : (x - sb) * scale);
    const batch_d e = sharp::simd::exp2_in_range(y);
    s += e;
    t = xsimd::fma(y, e, t);
    return e;
  };
  constexpr std::size_t L = simd::kLanes;
  std::size_t i = 0;
  for (; i + 2 * L <= len; i += 2 * L) {
    __builtin_prefetch(z + i + kPrefetchAhead);   // ahead of the hardware prefetcher (measured +15%)
    const batch_d e0 = term(simd::load_batch(z + i));
    const batch_d e1 = term(simd::load_batch(z + i + L));
    if constexpr (kStore) {
      simd::store_batch(p + i, e0);
      simd::store_batch(p + i + L, e1);
    }
  }
  for (; i + L <= len; i += L) {
    const batch_d e = term(simd::load_batch(z + i));
    if constexpr (kStore) simd::store_batch(p + i, e);
  }
  if (i < len) {   // padding lanes are -inf: they weigh exactly 0
    const batch_d e = term(simd::load_partial(z + i, len - i, kNegInf));
    if constexpr (kStore) simd::store_partial(p + i, len - i, e);
  }
  BlockResult out;
  out.stats.max = simd::horizontal_max(mx);
  out.stats.shift = shift;
  const double sum = xsimd::hadd(s), weighted = xsimd::hadd(t);
  if (d == 0.0) {   // also every block without kFmaShift
    out.stats.sum = sum;
    out.stats.weighted = kLn2 * weighted;
  } else {
    const double undo = pow2_of_residual(-d);
    out.stats.sum = undo * sum;
    out.stats.weighted = kLn2 * undo * (weighted - d * sum);
    out.stored_log2 = d;
  }
  out.bad = std::isnan(out.stats.sum) || std::isnan(out.stats.weighted) || out.stats.max == -kNegInf;
  return out;
}

// The fused shift while shift·scale stays within 2^50 (so |d| ≤ 1/8), else subtract first. Short
// blocks subtract too: a 16-entry row is bound by its chain of latencies, not by operation count,
// and the fused shift's scalar set-up and correction lengthen that chain (45 against 38 ns per
// 16-entry row; from 256 entries on the fused shift is faster).
constexpr std::size_t kFmaShiftMinLength = 256;

// A float block in float lanes (softmax_float_block.hpp), its sums turned into a BlockResult as the
// fused shift's are: the terms carry 2^d, d = the residual of the rounded reference.
template <bool kStore, bool kWeighted>
bool float_lanes_pass(const float* z, float* p, std::size_t len, double beta, double shift, BlockResult& out) {
  const detail::FloatBlockSums f = detail::float_block_pass<kStore, kWeighted>(z, p, len, beta, shift);
  if (!f.applicable) return false;
  out = BlockResult{};
  out.stats.max = f.max;
  out.stats.shift = shift;
  const double d = f.residual;
  const double undo = d == 0.0 ? 1.0 : pow2_of_residual(-d);
  out.stats.sum = undo * f.sum;
  out.stats.weighted = kWeighted ? kLn2 * undo * (f.weighted - d * f.sum) : 0.0;   // unused without kWeighted
  out.stored_log2 = d;
  out.bad = std::isnan(out.stats.sum) || std::isnan(out.stats.weighted) || out.stats.max == -kNegInf;
  return true;
}

// How a float row's blocks run: in double lanes (adaptive's first pass, whose entropy sets a beta
// that moves every weight: float exps would move its tail weights by tens of ulp), or in float lanes
// with the weighted sum (statistics) or without it (weights only). Double rows ignore it.
enum class FloatLanes { kNo, kSumOnly, kWeighted };

// Float rows of more than kNarrowRow entries run in float lanes when asked, unless the reference is
// too large for them.
template <class T, bool kStore, FloatLanes kLanes = FloatLanes::kWeighted>
BlockResult with_shift(const T* z, T* p, std::size_t len, double beta, double shift) {
  if constexpr (std::is_same_v<T, float> && kLanes != FloatLanes::kNo) {
    BlockResult out;
    if (float_lanes_pass<kStore, kLanes == FloatLanes::kWeighted>(z, p, len, beta, shift, out)) return out;
  }
  if (len >= kFmaShiftMinLength && std::fabs(shift * (beta * sharp::simd::kLog2e)) <= 0x1p50) {
    return block_pass_with_shift<T, kStore, true>(z, p, len, beta, shift);
  }
  return block_pass_with_shift<T, kStore, false>(z, p, len, beta, shift);
}

// The reference point's estimate: the max of the first 4 batches (16 entries at AVX2, 32 at
// AVX-512) by vector max, or of the first 16 entries one by one (shorter blocks, narrower ISAs).
template <class T>
double first_entries_max(const T* z, std::size_t len) {
  if (len >= 4 * simd::kLanes && 4 * simd::kLanes >= 16) {
    const batch_d a = xsimd::max(simd::load_batch(z), simd::load_batch(z + simd::kLanes));
    const batch_d b = xsimd::max(simd::load_batch(z + 2 * simd::kLanes), simd::load_batch(z + 3 * simd::kLanes));
    return simd::horizontal_max(xsimd::max(a, b));
  }
  double m = kNegInf;
  for (std::size_t i = 0; i < std::min<std::size_t>(len, 16); ++i) m = std::max(m, static_cast<double>(z[i]));
  return m;
}

// The reference point: the max of the block's first entries (already in cache). If the block's
// exact max turns out more than kMaxExcess/beta higher (or those were all masked), the block is
// redone with the exact max (an extra exp pass over L1-resident data); only that final pass's sums
// are checked, as a wrong shift may push y out of exp2's domain. kMaxExcess keeps every term below
// e^kMaxExcess: e^512 (x 2048 terms) is far from double overflow, e^64 from float overflow where a
// float p stores the terms. The shift below the max costs the entropy up to ~kMaxExcess ulp of
// cancellation (1e-13).
template <class T, bool kStore, FloatLanes kLanes>
BlockResult block_pass(const T* z, T* p, std::size_t len, double beta) {
  constexpr double kMaxExcess = (kStore && sizeof(T) < sizeof(double)) ? 64.0 : 512.0;
  const double shift = first_entries_max(z, len);
  BlockResult r = with_shift<T, kStore, kLanes>(z, p, len, beta, shift);
  if (r.stats.max == kNegInf) {   // the whole block is masked, unless a NaN hides among -inf
    for (std::size_t i = 0; i < len; ++i) {
      if (std::isnan(static_cast<double>(z[i]))) return r;   // r.bad is set: NaN sums
    }
    if constexpr (kStore) std::fill(p, p + len, T(0));
    return BlockResult{};
  }
  if (!(beta * (r.stats.max - shift) <= kMaxExcess) && r.stats.max < -kNegInf) {
    r = with_shift<T, kStore, kLanes>(z, p, len, beta, r.stats.max);
  }
  return r;
}

// A row of at most kNarrowRow entries, whole: the exact max first (a vector pass over the row, which
// then stays in L1), so no reference estimate, redo test or residual correction. For a 16-entry row
// these fixed costs of block_pass were as large as its exps: 34 -> 25 ns per softmax_row (Zen 5);
// equal at 128 entries, slower at 256. Its loop is its own: block_pass_with_shift called with the
// exact max measured 26 against 21 ns per 16-entry row (running max, prefetch, two-batch loop).
constexpr std::size_t kNarrowRow = 64;

template <class T, bool kStore>
OnlineSoftmax<> narrow_row(const T* z, T* p, std::size_t n, double beta) {
  constexpr std::size_t L = simd::kLanes;
  const std::size_t whole = n - n % L;
  batch_d mx(kNegInf);
  for (std::size_t i = 0; i < whole; i += L) mx = xsimd::max(mx, simd::load_batch(z + i));
  if (whole < n) mx = xsimd::max(mx, simd::load_partial(z + whole, n - whole, kNegInf));
  const double max = simd::horizontal_max(mx);
  // NaN and +inf logits (and an all-masked row: -inf - -inf) make the sums NaN, as in block_pass.
  const batch_d sb(max), scale(beta * sharp::simd::kLog2e), lowest(sharp::simd::kExp2Zero);
  batch_d s(0.0), t(0.0);
  auto term = [&](batch_d x) {
    const batch_d y = xsimd::max(lowest, (x - sb) * scale);
    const batch_d e = sharp::simd::exp2_in_range(y);
    s += e;
    t = xsimd::fma(y, e, t);
    return e;
  };
  for (std::size_t i = 0; i < whole; i += L) {
    const batch_d e = term(simd::load_batch(z + i));
    if constexpr (kStore) simd::store_batch(p + i, e);
  }
  if (whole < n) {   // padding lanes are -inf: they weigh exactly 0
    const batch_d e = term(simd::load_partial(z + whole, n - whole, kNegInf));
    if constexpr (kStore) simd::store_partial(p + whole, n - whole, e);
  }
  const OnlineSoftmax<> stats{.shift = max, .max = max, .sum = xsimd::hadd(s), .weighted = kLn2 * xsimd::hadd(t)};
  if (std::isnan(stats.sum) || std::isnan(stats.weighted) || max == kNegInf) throw_row_problem(z, n);
  return stats;
}

// Workspace slot 3: per-block results while the blocks run, then (kStore) the pairs (shift,
// stored_log2) of every block, which normalise_terms reads.
constexpr std::size_t kBlockSlot = 3;

// Runs every block (in parallel when asked), merges in block order, and reports problems.
template <class T, bool kStore, FloatLanes kLanes = FloatLanes::kWeighted>
OnlineSoftmax<> all_blocks(const T* z, T* p, std::size_t n, double beta, bool parallel, Workspace& ws) {
  const std::size_t blocks = (n + kSoftmaxBlock - 1) / kSoftmaxBlock;
  OnlineSoftmax<> total;
  if (n <= kNarrowRow) {
    const OnlineSoftmax<> r = narrow_row<T, kStore>(z, p, n, beta);
    if constexpr (kStore) {
      double* scales = ws.doubles(kBlockSlot, 2);
      scales[0] = r.shift;
      scales[1] = 0.0;
    }
    return r;
  }
  if (blocks <= 1) {
    const BlockResult r = block_pass<T, kStore, kLanes>(z, p, n, beta);
    if (r.bad || r.stats.max == kNegInf) throw_row_problem(z, n);
    if constexpr (kStore) {
      double* scales = ws.doubles(kBlockSlot, 2);
      scales[0] = r.stats.shift;
      scales[1] = r.stored_log2;
    }
    return r.stats;
  }
  // Per-block results: shift, sum, weighted, max, bad flag (as 0/1), stored_log2.
  constexpr std::size_t kStride = 6;
  double* res = ws.doubles(kBlockSlot, kStride * blocks);
  auto run_block = [&](std::size_t b) {
    const std::size_t first = b * kSoftmaxBlock;
    const std::size_t len = std::min(kSoftmaxBlock, n - first);
    const BlockResult r = block_pass<T, kStore, kLanes>(z + first, p ? p + first : nullptr, len, beta);
    double* out = res + kStride * b;
    out[0] = r.stats.shift;
    out[1] = r.stats.sum;
    out[2] = r.stats.weighted;
    out[3] = r.stats.max;
    out[4] = r.bad ? 1.0 : 0.0;
    out[5] = r.stored_log2;
  };
  parallel_for(blocks, Loop{"softmax/blocks", 0, 0, parallel}, run_block);
  bool bad = false;
  for (std::size_t b = 0; b < blocks; ++b) {
    const double* in = res + kStride * b;
    bad = bad || in[4] != 0.0;
    total.merge(OnlineSoftmax<>{.shift = in[0], .max = in[3], .sum = in[1], .weighted = in[2]}, beta);
  }
  if (bad || total.max == kNegInf) throw_row_problem(z, n);
  if constexpr (kStore) {
    // Compact to pairs at the front (entries 2b, 2b+1 <= 6b: nothing unread is overwritten).
    for (std::size_t b = 0; b < blocks; ++b) {
      res[2 * b] = res[kStride * b];
      res[2 * b + 1] = res[kStride * b + 5];
    }
  }
  return total;
}

// p *= factor: doubles in double lanes; floats in float lanes by the factor rounded to float (two
// roundings, at most 1 ulp, where widening would cost as much as the float kernel's sums).
inline void scale_block(double* p, std::size_t len, double factor) {
  const batch_d f(factor);
  std::size_t i = 0;
  for (; i + simd::kLanes <= len; i += simd::kLanes) simd::store_batch(p + i, simd::load_batch(p + i) * f);
  for (; i < len; ++i) p[i] *= factor;
}
inline void scale_block(float* p, std::size_t len, double factor) {
  if (!(factor >= 0x1p-100)) {   // a factor near FLT_MIN would lose bits as a float: double lanes
    std::size_t i = 0;
    const batch_d f(factor);
    for (; i + simd::kLanes <= len; i += simd::kLanes) simd::store_batch(p + i, simd::load_batch(p + i) * f);
    for (; i < len; ++i) p[i] = static_cast<float>(static_cast<double>(p[i]) * factor);
    return;
  }
  using BF = xsimd::batch<float>;
  const float ff = static_cast<float>(factor);
  const BF f(ff);
  std::size_t i = 0;
  for (; i + BF::size <= len; i += BF::size) (BF::load_unaligned(p + i) * f).store_unaligned(p + i);
  for (; i < len; ++i) p[i] *= ff;
}

}  // namespace

template <class T>
OnlineSoftmax<> softmax_row_statistics(const T* z, std::size_t n, double beta, bool parallel,
                                       Workspace& ws) {
  return all_blocks<T, false>(z, static_cast<T*>(nullptr), n, beta, parallel, ws);
}

template <class T>
OnlineSoftmax<> softmax_terms(const T* z, T* p, std::size_t n, double beta, bool parallel, Workspace& ws) {
  return all_blocks<T, true, FloatLanes::kNo>(z, p, n, beta, parallel, ws);
}

template <class T>
void normalise_terms(T* p, std::size_t n, double beta, const OnlineSoftmax<>& total, bool parallel,
                     Workspace& ws) {
  const std::size_t blocks = (n + kSoftmaxBlock - 1) / kSoftmaxBlock;
  const double* scales = ws.doubles(kBlockSlot, 2 * blocks);   // (shift, stored_log2) per block
  // p_k = exp(beta (z_k - s_b)) * exp(a_b) for block b, a_b = beta (s_b - S) - ln sum - d_b ln 2
  // (S = the row's shift, d_b = the block's stored_log2). One block: s_b = S, and the factor is
  // 2^-d / sum. The stored terms may reach e^512 while exp(a_b) alone would underflow, so a factor
  // below e^-708 is applied in two halves.
  if (blocks == 1) {
    scale_block(p, n, pow2_of_residual(-scales[1]) / total.sum);   // exactly 1 / sum when d = 0
    return;
  }
  const double log_sum = std::log(total.sum);
  auto scale = [&](std::size_t b) {
    const std::size_t first = b * kSoftmaxBlock;
    const std::size_t len = std::min(kSoftmaxBlock, n - first);
    const double shift = scales[2 * b], stored_log2 = scales[2 * b + 1];
    if (shift == kNegInf) return;   // an all-masked block is already 0
    const double a = beta * (shift - total.shift) - log_sum - stored_log2 * kLn2;
    if (a >= sharp::simd::kExpLowest) {
      scale_block(p + first, len, sharp::simd::exp(a));
    } else {
      scale_block(p + first, len, sharp::simd::exp(0.5 * a));
      scale_block(p + first, len, sharp::simd::exp(a - 0.5 * a));
    }
  };
  parallel_for(blocks, Loop{"softmax/scale-blocks", 0, 0, parallel}, scale);
}

template <class T>
OnlineSoftmax<> softmax_row(const T* z, T* p, std::size_t n, double beta, bool parallel, Workspace& ws) {
  if (n <= kNarrowRow) {   // its terms are relative to the row's max: one scaling, no block scales
    const OnlineSoftmax<> total = narrow_row<T, true>(z, p, n, beta);
    scale_block(p, n, 1.0 / total.sum);
    return total;
  }
  const OnlineSoftmax<> total = all_blocks<T, true>(z, p, n, beta, parallel, ws);
  normalise_terms(p, n, beta, total, parallel, ws);
  return total;
}

template <class T>
void softmax_weights(const T* z, T* p, std::size_t n, double beta, bool parallel, Workspace& ws) {
  if (n <= kNarrowRow || std::is_same_v<T, double>) {
    softmax_row(z, p, n, beta, parallel, ws);
    return;
  }
  const OnlineSoftmax<> total = all_blocks<T, true, FloatLanes::kSumOnly>(z, p, n, beta, parallel, ws);
  normalise_terms(p, n, beta, total, parallel, ws);
}

template OnlineSoftmax<> softmax_row_statistics<double>(const double*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_row_statistics<float>(const float*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_row<double>(const double*, double*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_row<float>(const float*, float*, std::size_t, double, bool, Workspace&);
template void softmax_weights<double>(const double*, double*, std::size_t, double, bool, Workspace&);
template void softmax_weights<float>(const float*, float*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_terms<double>(const double*, double*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_terms<float>(const float*, float*, std::size_t, double, bool, Workspace&);
template void normalise_terms<double>(double*, std::size_t, double, const OnlineSoftmax<>&, bool, Workspace&);
template void normalise_terms<float>(float*, std::size_t, double, const OnlineSoftmax<>&, bool, Workspace&);

}  // namespace sharp::norm

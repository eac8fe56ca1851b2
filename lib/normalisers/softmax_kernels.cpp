#include "normalisers/softmax_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/parallel_for.hpp"
#include "core/simd_exp.hpp"
#include "normalisers/row_checks.hpp"
#include "normalisers/simd/softmax_block.hpp"
#include "normalisers/simd/softmax_block_impl.hpp"
#include "normalisers/simd_io.hpp"

namespace sharp::norm {
namespace {

using simd::batch_d;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.693147180559945309417;
using lanes::pow2_of_residual;

// A row of at most kNarrowRow entries, whole: the exact max first (a vector pass over the row, which
// then stays in L1), so no reference estimate, redo test or residual correction. For a 16-entry row
// these fixed costs of the block kernel were as large as its exps: 34 -> 25 ns per softmax_row (Zen 5);
// equal at 128 entries, slower at 256. Its loop is its own: the block kernel called with the
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
  // NaN and +inf logits (and an all-masked row: -inf - -inf) make the sums NaN, as in the block kernel.
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
  if (whole < n) {  // padding lanes are -inf: they weigh exactly 0
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
  constexpr FloatLanes kL = std::is_same_v<T, double> ? FloatLanes::kWeighted : kLanes;  // one double kernel
  const BlockKernel<T, kStore, kL> block_pass = block_kernel<T, kStore, kL>();  // this CPU's ISA
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
    const BlockResult r = block_pass(z, p, n, beta);
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
    const BlockResult r = block_pass(z + first, p ? p + first : nullptr, len, beta);
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
  if (!(factor >= 0x1p-100)) {  // a factor near FLT_MIN would lose bits as a float: double lanes
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
OnlineSoftmax<> softmax_row_statistics(const T* z, std::size_t n, double beta, bool parallel, Workspace& ws) {
  return all_blocks<T, false>(z, static_cast<T*>(nullptr), n, beta, parallel, ws);
}

template <class T>
OnlineSoftmax<> softmax_row_entropy_statistics(const T* z, std::size_t n, double beta, bool parallel, Workspace& ws) {
  return all_blocks<T, false, FloatLanes::kTwelveDigits>(z, static_cast<T*>(nullptr), n, beta, parallel, ws);
}

template <class T>
OnlineSoftmax<> softmax_terms(const T* z, T* p, std::size_t n, double beta, bool parallel, Workspace& ws) {
  return all_blocks<T, true, FloatLanes::kTwelveDigits>(z, p, n, beta, parallel, ws);
}

template <class T>
void normalise_terms(T* p, std::size_t n, double beta, const OnlineSoftmax<>& total, bool parallel, Workspace& ws) {
  const std::size_t blocks = (n + kSoftmaxBlock - 1) / kSoftmaxBlock;
  const double* scales = ws.doubles(kBlockSlot, 2 * blocks);  // (shift, stored_log2) per block
  // p_k = exp(beta (z_k - s_b)) * exp(a_b) for block b, a_b = beta (s_b - S) - ln sum - d_b ln 2
  // (S = the row's shift, d_b = the block's stored_log2). One block: s_b = S, and the factor is
  // 2^-d / sum. The stored terms may reach e^512 while exp(a_b) alone would underflow, so a factor
  // below e^-708 is applied in two halves.
  if (blocks == 1) {
    scale_block(p, n, pow2_of_residual(-scales[1]) / total.sum);  // exactly 1 / sum when d = 0
    return;
  }
  const double log_sum = std::log(total.sum);
  auto scale = [&](std::size_t b) {
    const std::size_t first = b * kSoftmaxBlock;
    const std::size_t len = std::min(kSoftmaxBlock, n - first);
    const double shift = scales[2 * b], stored_log2 = scales[2 * b + 1];
    if (shift == kNegInf) return;  // an all-masked block is already 0
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
  if (n <= kNarrowRow) {  // its terms are relative to the row's max: one scaling, no block scales
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
template OnlineSoftmax<> softmax_row_entropy_statistics<double>(const double*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_row_entropy_statistics<float>(const float*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_row<double>(const double*, double*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_row<float>(const float*, float*, std::size_t, double, bool, Workspace&);
template void softmax_weights<double>(const double*, double*, std::size_t, double, bool, Workspace&);
template void softmax_weights<float>(const float*, float*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_terms<double>(const double*, double*, std::size_t, double, bool, Workspace&);
template OnlineSoftmax<> softmax_terms<float>(const float*, float*, std::size_t, double, bool, Workspace&);
template void normalise_terms<double>(double*, std::size_t, double, const OnlineSoftmax<>&, bool, Workspace&);
template void normalise_terms<float>(float*, std::size_t, double, const OnlineSoftmax<>&, bool, Workspace&);

}  // namespace sharp::norm

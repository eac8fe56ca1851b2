#include "normalisers/softmax_kernels.hpp"

#include <algorithm>
#include <cmath>

#include "core/simd_exp.hpp"
#include "normalisers/row_checks.hpp"
#include "normalisers/simd_io.hpp"

namespace sharp::norm {
namespace {

using simd::batch_d;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.693147180559945309417;
constexpr std::size_t kPrefetchAhead = 256;   // entries

struct BlockResult {
  SoftmaxRowStats stats;
  bool bad = false;   // NaN or +inf somewhere in the block
};

// exp(beta (z - shift)) = 2^y with y = (z - shift) (beta log2 e): base 2, so the argument reduction
// inside exp2 is exact and needs no multiply (core/simd_exp.hpp; log2 e rides on beta's multiply). Summed (and stored into p when
// kStore) in one pass that also finds the block's max; the sum of y 2^y times ln 2 is SPEC §3's
// weighted sum. y is clamped to exp2_in_range's domain: max(lowest, NaN) is NaN (x86 returns the
// second operand), so a NaN or +inf logit makes the sums NaN — checked once per block, not per
// entry. Masked entries (-inf) get exactly 0 when stored (select); in the sums alone they add
// 2^-1022, below the rounding of any sum that contains the max's 1. One accumulator pair: an exp
// costs far more than the adds' latency, and with exp2's constants a second pair no longer fits in
// the 16 registers (GCC spilled it). Per batch of 4: 10 multiply-adds (8 in exp2) on the 2 FMA
// pipes and 13 other vector operations; measured about 9 cycles (1.4 G logits/s in L1, Zen 5).
template <class T, bool kStore>
BlockResult block_pass_with_shift(const T* z, T* p, std::size_t len, double beta, double shift) {
  const batch_d sb(shift), scale(beta * sharp::simd::kLog2e), lowest(-1022.0);
  batch_d mx(kNegInf), s(0.0), t(0.0);
  // 2^y of one batch, and the clamped y for the weighted sum.
  auto exp_term = [&](batch_d x, batch_d& yc) {
    mx = xsimd::max(mx, x);
    const batch_d y = (x - sb) * scale;
    yc = xsimd::max(lowest, y);
    const batch_d e = sharp::simd::exp2_in_range(yc);
    return kStore ? xsimd::select(y < lowest, batch_d(0.0), e) : e;   // stored: masked -> exactly 0
  };
  auto term = [&](batch_d x) {
    batch_d yc;
    const batch_d e = exp_term(x, yc);
    s += e;
    t = xsimd::fma(yc, e, t);
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
  if (i < len) {   // padding lanes are -inf: exactly 0 after the select
    const batch_d x = simd::load_partial(z + i, len - i, kNegInf);
    batch_d yc;
    const batch_d e = xsimd::select(x == batch_d(kNegInf), batch_d(0.0), exp_term(x, yc));
    s += e;
    t = xsimd::fma(yc, e, t);
    if constexpr (kStore) simd::store_partial(p + i, len - i, e);
  }
  BlockResult out;
  out.stats.max = simd::horizontal_max(mx);
  out.stats.shift = shift;
  out.stats.sum = xsimd::hadd(s);
  out.stats.weighted = kLn2 * xsimd::hadd(t);
  out.bad = std::isnan(out.stats.sum) || std::isnan(out.stats.weighted) || out.stats.max == -kNegInf;
  return out;
}

// The reference point: the max of the block's first 16 entries (already in cache). If the block's
// exact max turns out more than kMaxExcess/beta higher (or those 16 were all masked), the block is
// redone with the exact max (an extra exp pass over L1-resident data); only that final pass's sums
// are checked, as a wrong shift may push y out of exp2's domain. kMaxExcess keeps every term below
// e^kMaxExcess: e^512 (x 2048 terms) is far from double overflow, e^64 from float overflow where a
// float p stores the terms. The shift below the max costs the entropy up to ~kMaxExcess ulp of
// cancellation (1e-13).
template <class T, bool kStore>
BlockResult block_pass(const T* z, T* p, std::size_t len, double beta) {
  constexpr double kMaxExcess = (kStore && sizeof(T) < sizeof(double)) ? 64.0 : 512.0;
  double shift = kNegInf;
  for (std::size_t i = 0; i < std::min<std::size_t>(len, 16); ++i) shift = std::max(shift, static_cast<double>(z[i]));
  BlockResult r = block_pass_with_shift<T, kStore>(z, p, len, beta, shift);
  if (r.stats.max == kNegInf) {   // the whole block is masked, unless a NaN hides among -inf
    for (std::size_t i = 0; i < len; ++i) {
      if (std::isnan(static_cast<double>(z[i]))) return r;   // r.bad is set: NaN sums
    }
    if constexpr (kStore) std::fill(p, p + len, T(0));
    return BlockResult{};
  }
  if (!(beta * (r.stats.max - shift) <= kMaxExcess) && r.stats.max < -kNegInf) {
    r = block_pass_with_shift<T, kStore>(z, p, len, beta, r.stats.max);
  }
  return r;
}


// Runs every block (in parallel when asked), merges in block order, and reports problems.
template <class T, bool kStore>
SoftmaxRowStats all_blocks(const T* z, T* p, std::size_t n, double beta, bool parallel,
                           Workspace& ws, double** block_shift_out) {
  const std::size_t blocks = (n + kSoftmaxBlock - 1) / kSoftmaxBlock;
  SoftmaxRowStats total;
  if (blocks <= 1) {
    const BlockResult r = block_pass<T, kStore>(z, p, n, beta);
    if (r.bad || r.stats.max == kNegInf) throw_row_problem(z, n);
    if (block_shift_out) {
      double* bs = ws.doubles(3, 1);
      bs[0] = r.stats.shift;
      *block_shift_out = bs;
    }
    return r.stats;
  }
  // Per-block results: shift, sum, weighted, max, bad flag (as 0/1).
  constexpr std::size_t kStride = 5;
  double* res = ws.doubles(3, kStride * blocks);
  auto run_block = [&](std::size_t b) {
    const std::size_t first = b * kSoftmaxBlock;
    const std::size_t len = std::min(kSoftmaxBlock, n - first);
    const BlockResult r = block_pass<T, kStore>(z + first, p ? p + first : nullptr, len, beta);
    double* out = res + kStride * b;
    out[0] = r.stats.shift;
    out[1] = r.stats.sum;
    out[2] = r.stats.weighted;
    out[3] = r.stats.max;
    out[4] = r.bad ? 1.0 : 0.0;
  };
  if (parallel) {
#pragma omp parallel for schedule(static)
    for (std::size_t b = 0; b < blocks; ++b) run_block(b);
  } else {
    for (std::size_t b = 0; b < blocks; ++b) run_block(b);
  }
  bool bad = false;
  for (std::size_t b = 0; b < blocks; ++b) {
    const double* in = res + kStride * b;
    bad = bad || in[4] != 0.0;
    merge_softmax_stats(total, SoftmaxRowStats{in[0], in[1], in[2], in[3]}, beta);
  }
  if (bad || total.max == kNegInf) throw_row_problem(z, n);
  if (block_shift_out) {
    // Compact the block shifts to the front of the buffer for the caller's scaling pass.
    for (std::size_t b = 0; b < blocks; ++b) res[b] = res[kStride * b];
    *block_shift_out = res;
  }
  return total;
}

template <class T>
void scale_block(T* p, std::size_t len, double factor) {
  const batch_d f(factor);
  std::size_t i = 0;
  for (; i + simd::kLanes <= len; i += simd::kLanes) simd::store_batch(p + i, simd::load_batch(p + i) * f);
  for (; i < len; ++i) p[i] = static_cast<T>(static_cast<double>(p[i]) * factor);
}

}  // namespace

void merge_softmax_stats(SoftmaxRowStats& acc, const SoftmaxRowStats& later, double beta) {
  if (later.max == kNegInf) return;
  if (acc.max == kNegInf) {
    acc = later;
    return;
  }
  // Rescale both to the common shift S: exp(beta (z - S)) = exp(beta (z - s)) exp(beta (s - S)) and
  // beta (z - S) = beta (z - s) + beta (s - S).
  const double shift = std::max(acc.shift, later.shift);
  const double da = beta * (acc.shift - shift), db = beta * (later.shift - shift);
  const double fa = sharp::simd::exp(da), fb = sharp::simd::exp(db);
  const double weighted = fa * (acc.weighted + da * acc.sum) + fb * (later.weighted + db * later.sum);
  acc.sum = fa * acc.sum + fb * later.sum;
  acc.weighted = weighted;
  acc.shift = shift;
  acc.max = std::max(acc.max, later.max);
}

template <class T>
SoftmaxRowStats softmax_row_statistics(const T* z, std::size_t n, double beta, bool parallel,
                                       Workspace& ws) {
  return all_blocks<T, false>(z, static_cast<T*>(nullptr), n, beta, parallel, ws, nullptr);
}

template <class T>
SoftmaxRowStats softmax_row(const T* z, T* p, std::size_t n, double beta, bool parallel, Workspace& ws) {
  double* block_shift = nullptr;
  const SoftmaxRowStats total = all_blocks<T, true>(z, p, n, beta, parallel, ws, &block_shift);
  const double inv_sum = 1.0 / total.sum;
  const std::size_t blocks = (n + kSoftmaxBlock - 1) / kSoftmaxBlock;
  if (blocks == 1) {   // one block: its shift is the row's
    scale_block(p, n, inv_sum);
    return total;
  }
  // p_k = exp(beta (z_k - s_b)) * exp(a_b) for block b, a_b = beta (s_b - S) - ln sum (S = the row's
  // shift). The stored terms may reach e^512 while exp(a_b) alone would underflow, so a factor below
  // e^-708 is applied in two halves.
  const double log_sum = std::log(total.sum);
  auto scale = [&](std::size_t b) {
    const std::size_t first = b * kSoftmaxBlock;
    const std::size_t len = std::min(kSoftmaxBlock, n - first);
    if (block_shift[b] == kNegInf) return;   // an all-masked block is already 0
    const double a = beta * (block_shift[b] - total.shift) - log_sum;
    if (a >= sharp::simd::kExpLowest) {
      scale_block(p + first, len, sharp::simd::exp(a));
    } else {
      scale_block(p + first, len, sharp::simd::exp(0.5 * a));
      scale_block(p + first, len, sharp::simd::exp(a - 0.5 * a));
    }
  };
  if (parallel && blocks > 1) {
#pragma omp parallel for schedule(static)
    for (std::size_t b = 0; b < blocks; ++b) scale(b);
  } else {
    for (std::size_t b = 0; b < blocks; ++b) scale(b);
  }
  return total;
}

template SoftmaxRowStats softmax_row_statistics<double>(const double*, std::size_t, double, bool, Workspace&);
template SoftmaxRowStats softmax_row_statistics<float>(const float*, std::size_t, double, bool, Workspace&);
template SoftmaxRowStats softmax_row<double>(const double*, double*, std::size_t, double, bool, Workspace&);
template SoftmaxRowStats softmax_row<float>(const float*, float*, std::size_t, double, bool, Workspace&);

}  // namespace sharp::norm

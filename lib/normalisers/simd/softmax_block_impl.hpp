#pragma once
// The block kernels of the softmax family (normalisers/simd/softmax_block.hpp), templated on the xsimd
// architecture A, for softmax_block_avx2.cpp and softmax_block_avx512.cpp. Everything here has
// internal linkage (an unnamed namespace): each ISA's translation unit gets its own copy, so no
// function compiled for AVX-512 can be picked by the linker for code that runs on an AVX2 node.
//
// Width independence (the same bits at AVX2 and AVX-512): sums run over 8 partials, entry i into
// partial i mod 8 in index order (AVX2: two 4-double accumulators per octet of entries, AVX-512:
// one of 8), added in one fixed order at the end; the reference estimate is the max of the first 16
// entries; float pairs (i, i + 8) of each 16 entries are added before widening. Maxima are exact.
#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "core/simd_exp.hpp"
#include "normalisers/simd/softmax_block.hpp"

namespace sharp::norm::lanes {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.693147180559945309417;
constexpr std::size_t kPrefetchAhead = 256;  // entries

// 2^x for the residuals d of the fused shift (|x| ≤ 1/8, usually ~1e-15): a glibc call costs as
// much as a 16-entry row's exps, so tiny x (the normal case: |c| < 2^24) takes two Taylor terms,
// whose remainder (x ln 2)^3/6 < 2^-80 is below the final rounding.
inline double pow2_of_residual(double x) {
  if (std::fabs(x) >= 0x1p-28) return std::exp2(x);
  const double u = x * kLn2;
  return 1.0 + std::fma(0.5 * u, u, u);
}

// The 8 partials added in one fixed order.
inline double sum_partials(const double* v) {
  return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

template <class A>
using BD = xsimd::batch<double, A>;
template <class A>
using BF = xsimd::batch<float, A>;

// One batch of logits as doubles (floats widened exactly) and back.
template <class A>
BD<A> load(const double* x) {
  return BD<A>::load_unaligned(x);
}
template <class A>
BD<A> load(const float* x) {
  static_assert(BD<A>::size == 4 || BD<A>::size == 8, "built for AVX2 and AVX-512 only");
#if defined(__AVX512F__)
  if constexpr (BD<A>::size == 8) return BD<A>(_mm512_cvtps_pd(_mm256_loadu_ps(x)));
#endif
  if constexpr (BD<A>::size == 4) return BD<A>(_mm256_cvtps_pd(_mm_loadu_ps(x)));
}
template <class A>
void store(double* y, const BD<A>& v) {
  v.store_unaligned(y);
}
template <class A>
void store(float* y, const BD<A>& v) {
#if defined(__AVX512F__)
  if constexpr (BD<A>::size == 8) _mm256_storeu_ps(y, _mm512_cvtpd_ps(v));
#endif
  if constexpr (BD<A>::size == 4) _mm_storeu_ps(y, _mm256_cvtpd_ps(v));
}

template <class A, class V>
double max_of(const V& v) {
  alignas(64) typename V::value_type lane[V::size];
  v.store_aligned(lane);
  double m = lane[0];
  for (std::size_t i = 1; i < V::size; ++i) m = m > lane[i] ? m : static_cast<double>(lane[i]);
  return m;
}

// --- Double lanes -------------------------------------------------------------------------------

// exp(beta (z - shift)) = 2^y with y = (z - shift) (beta log2 e): base 2, so the argument reduction
// inside exp2 is exact and needs no multiply (core/simd_exp.hpp). Summed (and stored into p when
// kStore) in one pass that also finds the block's max; the sum of y 2^y times ln 2 is the weighted
// sum t of docs/science.md#streaming-entropy. y is clamped at kExp2Zero, where exp2_in_range gives
// exactly 0: masked entries (-inf) and entries below 2^-1023 of the reference weigh exactly 0, with no
// select. max(lowest, NaN) is NaN (x86 returns the second operand), so a NaN or +inf logit makes the
// sums NaN — checked once per block, not per entry.
//
// kFmaShift: y = fma(z, scale, -c) with c = shift·scale rounded, one operation instead of a subtract
// and a multiply. It computes y' = y + d rounded once, where d = shift·scale − c is the exact
// residual of c (TwoProduct by fma), the same for every entry: so 2^y' = 2^d 2^y, and the block's
// sums are corrected exactly, sum = 2^-d Σ2^y' and Σy2^y = 2^-d (Σy'2^y' − d Σ2^y'). Stored terms
// keep their 2^d (stored_log2 = d), which the normalising pass divides out. Used while |c| ≤ 2^50
// (|d| ≤ 1/8); for larger logits (|z| ≳ 1e15) d could leave exp2's domain, so those subtract first.
//
// kTwelveDigits (float rows of adaptive temperature's first pass, FloatLanes::kTwelveDigits): 2^y to
// 12 digits (exp2_in_range_12_digits, 3 FMAs fewer than the full exp) and the max taken in float
// lanes (half the operations); the sums as above. Why 12 digits are enough and float lanes' 7 are
// not: softmax_block.hpp.
template <class A, class T, bool kStore, bool kFmaShift, bool kTwelveDigits = false>
BlockResult double_pass(const T* z, T* p, std::size_t len, double beta, double shift) {
  static_assert(!kTwelveDigits || std::is_same_v<T, float>, "12 digits: float rows");
  using B = BD<A>;
  using F = BF<A>;
  constexpr std::size_t W = B::size, K = 8 / W;  // K accumulators of W lanes: 8 partials
  const double scale_d = beta * sharp::simd::kLog2e;
  const double c = shift * scale_d;
  const double d = kFmaShift ? std::fma(shift, scale_d, -c) : 0.0;  // shift·scale = c + d exactly
  const B sb(shift), minus_c(-c), scale(scale_d), lowest(sharp::simd::kExp2Zero);
  B mx(kNegInf);
  F mx_float(-std::numeric_limits<float>::infinity());
  B s[K], t[K];
  for (std::size_t k = 0; k < K; ++k) s[k] = t[k] = B(0.0);
  auto term = [&](B x, std::size_t k) {
    if constexpr (!kTwelveDigits) mx = xsimd::max(mx, x);
    const B y = xsimd::max(lowest, kFmaShift ? sharp::simd::fused_mul_add(x, scale, minus_c) : (x - sb) * scale);
    const B e = kTwelveDigits ? sharp::simd::exp2_in_range_12_digits(y) : sharp::simd::exp2_in_range(y);
    s[k] += e;
    t[k] = sharp::simd::fused_mul_add(y, e, t[k]);
    return e;
  };
  auto octet = [&](const T* zo, T* po) {  // po: null without kStore
    for (std::size_t k = 0; k < K; ++k) {
      const B e = term(load<A>(zo + k * W), k);
      if constexpr (kStore) store<A>(po + k * W, e);
    }
  };
  auto group = [&](const T* zg, T* pg) {  // 16 entries
    if constexpr (kTwelveDigits) {
      for (std::size_t g = 0; g < 16; g += F::size) mx_float = xsimd::max(mx_float, F::load_unaligned(zg + g));
    }
    octet(zg, pg);
    octet(zg + 8, kStore ? pg + 8 : nullptr);
  };
  auto out_at = [&](std::size_t i) { return kStore ? p + i : nullptr; };
  std::size_t i = 0;
  for (; i + 16 <= len; i += 16) {
    __builtin_prefetch(z + i + kPrefetchAhead);  // ahead of the hardware prefetcher (measured +15%)
    group(z + i, out_at(i));
  }
  if (i < len) {  // a last, partial group padded with -inf: weight exactly 0, adds +0 to every sum
    T zb[16], pb[16];
    for (std::size_t l = 0; l < 16; ++l) zb[l] = i + l < len ? z[i + l] : T(kNegInf);
    group(zb, pb);
    if constexpr (kStore) {
      for (std::size_t l = 0; i + l < len; ++l) p[i + l] = pb[l];
    }
  }
  alignas(64) double sp[8], tp[8];
  for (std::size_t k = 0; k < K; ++k) {
    s[k].store_aligned(sp + k * W);
    t[k].store_aligned(tp + k * W);
  }
  BlockResult out;
  out.stats.max = kTwelveDigits ? max_of<A>(mx_float) : max_of<A>(mx);
  out.stats.shift = shift;
  const double sum = sum_partials(sp), weighted = sum_partials(tp);
  if (d == 0.0) {  // also every block without kFmaShift
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

// --- Float lanes ----------------------------------------------------------------------------------
//
// Why the reduction is split: a float y = beta log2(e) (z − shift) carries an absolute error up to
// |y|·2^-24, which 2^y turns into a relative error of |y| ulp (70 ulp at y = −100). So y is never
// rounded to float. The reference c = shift·beta·log2(e) is rounded to a multiple of 1/8 (its
// residual d, |d| ≤ 1/16, is corrected as the fused shift's is), the scale to a float pair
// s_hi + s_lo, and then
//   t = fma(z, s_hi, shifter − c)   (round(8(z s_hi − c)) = 8k + j in t's low bits; shifter − c exact),
//   m = t − (shifter − c)           (= k + j/8 + c, exact),
//   f = fma(z, s_lo, fma(z, s_hi, −m))   (the fused product rounds once, |f| ≤ 1/16 + |z s_lo|),
// and 2^y = 2^k·2^(j/8)·2^f as in the exp (core/simd_exp.hpp). Entries far below the
// reference (masked ones included) are clamped so that k = −127, where the table gives exactly 0.
// Valid while |c| < 2^18 (|z| up to about 1.8e5/beta); beyond, or for beta ≤ 0, double lanes.
//
// Sums in double: the pairs (i, i + 8) of each 16 entries are added in float (one rounding, 2^-24
// relative) and widened. With the weighted sum (statistics), sums and y·e (y = k + j/8 + f in float)
// run in float lanes over 4 groups of 16 before their pairs are widened: the statistics of a float
// row to float precision (entropy within 1e-6 relative, tests/unit/test_softmax_float.cpp). A caller whose entropy moves weights
// (adaptive temperature) takes double lanes instead (FloatLanes::kTwelveDigits).

// 8 floats widened to the 8 partials' layout: one batch of 8 doubles (AVX-512), two of 4 (AVX2).
template <class A>
void add_widened(BD<A>* acc, __m256 v) {
#if defined(__AVX512F__)
  if constexpr (BD<A>::size == 8) {
    acc[0] += BD<A>(_mm512_cvtps_pd(v));
    return;
  }
#endif
  if constexpr (BD<A>::size == 4) {
    acc[0] += BD<A>(_mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    acc[1] += BD<A>(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
}
// The 8-float halves of a float batch (AVX2: the batch itself).
template <class A>
__m256 low8(const BF<A>& v) {
#if defined(__AVX512F__)
  if constexpr (BF<A>::size == 16) return _mm512_castps512_ps256(v);
#endif
  if constexpr (BF<A>::size == 8) return v;
}
template <class A>
__m256 high8(const BF<A>& v) {
#if defined(__AVX512F__)
  if constexpr (BF<A>::size == 16) return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
#endif
  return __m256{};  // not used at AVX2
}

// Sums of 2^(y + d) relative to the rounded reference c (see above); applicable = false (nothing
// computed) when the float lanes cannot take this reference.
struct FloatSums {
  bool applicable = false;
  double max = 0.0, sum = 0.0, weighted = 0.0, residual = 0.0;
};

template <class A, bool kStore, bool kWeighted>
FloatSums float_pass(const float* z, float* p, std::size_t len, double beta, double shift) {
  using F = BF<A>;
  using D = BD<A>;
  constexpr std::size_t LF = F::size, G = 16 / LF, K = 8 / D::size;  // G float batches per 16 entries
  constexpr float kInf = std::numeric_limits<float>::infinity();
  FloatSums out;
  const double scale = beta * sharp::simd::kLog2e;
  const double cd = shift * scale;
  const double c = std::nearbyint(8.0 * cd) / 8.0;
  if (!(scale > 0.0) || !(std::fabs(c) < 0x1p18)) return out;
  out.applicable = true;
  out.residual = (cd - c) + std::fma(shift, scale, -cd);  // shift·scale − c (cd − c is exact)
  const float s_hi = static_cast<float>(scale);
  const float s_lo = static_cast<float>(scale - static_cast<double>(s_hi));
  const float cf = static_cast<float>(c);  // exact: a multiple of 1/8 below 2^18
  const F shi(s_hi), slo(s_lo);
  const F sc(sharp::simd::ExpConstants<float>::kShifter - cf);  // exact
  const F t_low(sharp::simd::ExpConstants<float>::kShifter + sharp::simd::kExp2ZeroF);  // k = −127: exactly 0
  const F z_low(static_cast<float>((c - 200.0) / scale));  // y ≈ −200, below t_low's
  const F shifter(sharp::simd::ExpConstants<float>::kShifter);
  F mx(-kInf);
  D s[K], t[K];
  for (std::size_t k = 0; k < K; ++k) s[k] = t[k] = D(0.0);
  // 2^(y + d) of one batch. max(z_low, x) and max(t_low, ·) keep NaN (x86 returns the second
  // operand), so a NaN logit makes the sums NaN; +inf gives inf·s − inf = NaN in f.
  auto term = [&](F x, F& ye) {
    mx = xsimd::max(mx, x);
    const F zc = xsimd::max(z_low, x);
    const F tt = xsimd::max(t_low, sharp::simd::fused_mul_add(zc, shi, sc));
    const F m = tt - sc;
    const F f = sharp::simd::fused_mul_add(zc, slo, sharp::simd::fused_mul_sub(zc, shi, m));
    const F e = sharp::simd::detail::exp2_from_reduced(tt, f);
    if constexpr (kWeighted) ye = (tt - shifter) + f;  // y = k + j/8 + f; masked: −200 (weight 0)
    return e;
  };
  // Pairs (i, i + 8) of 16 entries in float, widened into the 8 partials.
  auto add_pairs = [&](D* acc, const F* v) {
    if constexpr (G == 2) {
      add_widened<A>(acc, low8<A>(v[0] + v[1]));
    } else {
      add_widened<A>(acc, _mm256_add_ps(low8<A>(v[0]), high8<A>(v[0])));
    }
  };
  // With the weighted sum (statistics): runs of kRun groups summed in float lanes (lane i mod 16),
  // then their pairs widened: fewer operations per entry, float precision (3 roundings a run).
  constexpr std::size_t kRun = 4;
  F s_run[G], t_run[G];
  for (std::size_t g = 0; g < G; ++g) s_run[g] = t_run[g] = F(0.0f);
  std::size_t in_run = 0;
  auto flush_run = [&] {
    add_pairs(s, s_run);
    add_pairs(t, t_run);
    for (std::size_t g = 0; g < G; ++g) s_run[g] = t_run[g] = F(0.0f);
    in_run = 0;
  };
  auto group = [&](const float* zg, float* pg) {  // 16 entries; pg: null without kStore
    F e[G], y[G];
    for (std::size_t g = 0; g < G; ++g) e[g] = term(F::load_unaligned(zg + g * LF), y[g]);
    if constexpr (kWeighted) {
      for (std::size_t g = 0; g < G; ++g) {
        s_run[g] += e[g];
        t_run[g] = sharp::simd::fused_mul_add(y[g], e[g], t_run[g]);
      }
      if (++in_run == kRun) flush_run();
    } else {
      add_pairs(s, e);
    }
    if constexpr (kStore) {
      for (std::size_t g = 0; g < G; ++g) e[g].store_unaligned(pg + g * LF);
    }
  };
  std::size_t i = 0;
  for (; i + 16 <= len; i += 16) {
    __builtin_prefetch(z + i + 512);
    group(z + i, kStore ? p + i : nullptr);
  }
  if (i < len) {  // a last, partial group padded with −inf: weight exactly 0
    alignas(64) float zb[16], pb[16];
    for (std::size_t l = 0; l < 16; ++l) zb[l] = i + l < len ? z[i + l] : -kInf;
    group(zb, pb);
    if constexpr (kStore) {
      for (std::size_t l = 0; i + l < len; ++l) p[i + l] = pb[l];
    }
  }
  if constexpr (kWeighted) {
    if (in_run > 0) flush_run();
  }
  alignas(64) double sp[8], tp[8];
  for (std::size_t k = 0; k < K; ++k) {
    s[k].store_aligned(sp + k * D::size);
    t[k].store_aligned(tp + k * D::size);
  }
  out.max = max_of<A>(mx);
  out.sum = sum_partials(sp);
  out.weighted = kWeighted ? sum_partials(tp) : 0.0;
  return out;
}

// A float block in float lanes as a BlockResult: the terms carry 2^d, d = the reference's residual.
template <class A, bool kStore, bool kWeighted>
bool float_lanes_pass(const float* z, float* p, std::size_t len, double beta, double shift, BlockResult& out) {
  const FloatSums f = float_pass<A, kStore, kWeighted>(z, p, len, beta, shift);
  if (!f.applicable) return false;
  out = BlockResult{};
  out.stats.max = f.max;
  out.stats.shift = shift;
  const double d = f.residual;
  const double undo = d == 0.0 ? 1.0 : pow2_of_residual(-d);
  out.stats.sum = undo * f.sum;
  out.stats.weighted = kWeighted ? kLn2 * undo * (f.weighted - d * f.sum) : 0.0;  // unused without kWeighted
  out.stored_log2 = d;
  out.bad = std::isnan(out.stats.sum) || std::isnan(out.stats.weighted) || out.stats.max == -kNegInf;
  return true;
}

// --- One block ------------------------------------------------------------------------------------

// The fused shift while shift·scale stays within 2^50 (so |d| ≤ 1/8), else subtract first. Short
// blocks subtract too: their chain of latencies, not operation count, bounds them.
constexpr std::size_t kFmaShiftMinLength = 256;

template <class A, class T, bool kStore, FloatLanes kLanes>
BlockResult with_shift(const T* z, T* p, std::size_t len, double beta, double shift) {
  // Float rows: float lanes where they apply, else double lanes (to 12 digits for kTwelveDigits).
  constexpr bool kTwelveDigits = std::is_same_v<T, float> && kLanes == FloatLanes::kTwelveDigits;
  if constexpr (std::is_same_v<T, float> && !kTwelveDigits) {
    BlockResult out;
    if (float_lanes_pass<A, kStore, kLanes == FloatLanes::kWeighted>(z, p, len, beta, shift, out)) return out;
  }
  if (len >= kFmaShiftMinLength && std::fabs(shift * (beta * sharp::simd::kLog2e)) <= 0x1p50) {
    return double_pass<A, T, kStore, true, kTwelveDigits>(z, p, len, beta, shift);
  }
  return double_pass<A, T, kStore, false, kTwelveDigits>(z, p, len, beta, shift);
}

// The reference point's estimate: the max of the first 16 entries (the same entries at every width).
template <class T>
double first_entries_max(const T* z, std::size_t len) {
  double m = kNegInf;
  const std::size_t count = len < 16 ? len : 16;
  for (std::size_t i = 0; i < count; ++i) m = m > static_cast<double>(z[i]) ? m : static_cast<double>(z[i]);
  return m;
}

// The reference point: the max of the block's first entries (already in cache). If the block's
// exact max turns out more than kMaxExcess/beta higher (or those were all masked), the block is
// redone with the exact max (an extra exp pass over L1-resident data); only that final pass's sums
// are checked, as a wrong shift may push y out of exp2's domain. kMaxExcess keeps every term below
// e^kMaxExcess: e^512 (x 2048 terms) is far from double overflow, e^64 from float overflow where
// the terms are float: stored into a float p, or computed in float lanes (2^y leaves the float
// exp's domain at y = 128, e^88.7: a spike 100/beta above the first entries gave garbage sums).
template <class A, class T, bool kStore, FloatLanes kLanes>
BlockResult block(const T* z, T* p, std::size_t len, double beta) {
  constexpr bool kFloatTerms = sizeof(T) < sizeof(double) && (kStore || kLanes != FloatLanes::kTwelveDigits);
  constexpr double kMaxExcess = kFloatTerms ? 64.0 : 512.0;
  const double shift = first_entries_max(z, len);
  BlockResult r = with_shift<A, T, kStore, kLanes>(z, p, len, beta, shift);
  if (r.stats.max == kNegInf) {  // the whole block is masked, unless a NaN hides among -inf
    for (std::size_t i = 0; i < len; ++i) {
      if (std::isnan(static_cast<double>(z[i]))) return r;  // r.bad is set: NaN sums
    }
    if constexpr (kStore) {
      for (std::size_t i = 0; i < len; ++i) p[i] = T(0);
    }
    return BlockResult{};
  }
  if (!(beta * (r.stats.max - shift) <= kMaxExcess) && r.stats.max < -kNegInf) {
    r = with_shift<A, T, kStore, kLanes>(z, p, len, beta, r.stats.max);
  }
  return r;
}

}  // namespace
}  // namespace sharp::norm::lanes

// Defines NAMESPACE::block<T, kStore, kLanes> for arch ARCH and instantiates every combination the
// row kernels use (softmax_block_avx2.cpp, softmax_block_avx512.cpp).
#define SHARP_DEFINE_SOFTMAX_BLOCK(NAMESPACE, ARCH)                                                               \
  namespace sharp::norm::NAMESPACE {                                                                              \
  template <class T, bool kStore, FloatLanes kLanes>                                                              \
  BlockResult block(const T* z, T* p, std::size_t len, double beta) {                                             \
    return lanes::block<ARCH, T, kStore, kLanes>(z, p, len, beta);                                                \
  }                                                                                                               \
  template BlockResult block<double, false, FloatLanes::kWeighted>(const double*, double*, std::size_t, double);  \
  template BlockResult block<double, true, FloatLanes::kWeighted>(const double*, double*, std::size_t, double);   \
  template BlockResult block<float, false, FloatLanes::kTwelveDigits>(const float*, float*, std::size_t, double); \
  template BlockResult block<float, true, FloatLanes::kTwelveDigits>(const float*, float*, std::size_t, double);  \
  template BlockResult block<float, false, FloatLanes::kSumOnly>(const float*, float*, std::size_t, double);      \
  template BlockResult block<float, true, FloatLanes::kSumOnly>(const float*, float*, std::size_t, double);       \
  template BlockResult block<float, false, FloatLanes::kWeighted>(const float*, float*, std::size_t, double);     \
  template BlockResult block<float, true, FloatLanes::kWeighted>(const float*, float*, std::size_t, double);      \
  }

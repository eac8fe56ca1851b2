// SoftmaxStream: each sub-chunk of kSubChunk values is summed in SIMD lanes (one pass when the
// running maximum bounds it, else an extremes pass first); the sub-chunk sums enter the running
// totals through Neumaier's compensated sum. Float sub-chunks go through the softmax family's block
// kernel in float lanes (normalisers/simd/softmax_block.hpp: the ISA chosen at start-up, the same bits on
// every ISA) and are merged as a part relative to their own max.
#include "normalisers/softmax_stream.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <xsimd/xsimd.hpp>

#include "core/errors.hpp"
#include "core/simd_exp.hpp"
#include "normalisers/simd/softmax_block.hpp"

namespace sharp::norm {
namespace {

using B = xsimd::batch<double>;
constexpr std::size_t W = B::size;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.693147180559945309417;

struct Extremes {
  double lo;
  double hi;
};

Extremes extremes(const double* z, std::size_t n) {
  B vlo(kInf), vhi(-kInf);
  std::size_t i = 0;
  for (; i + W <= n; i += W) {
    const B v = B::load_unaligned(z + i);
    vlo = xsimd::min(vlo, v);
    vhi = xsimd::max(vhi, v);
  }
  alignas(64) double lo_lanes[W], hi_lanes[W];
  vlo.store_aligned(lo_lanes);
  vhi.store_aligned(hi_lanes);
  Extremes e{lo_lanes[0], hi_lanes[0]};
  for (std::size_t j = 1; j < W; ++j) {
    e.lo = std::min(e.lo, lo_lanes[j]);
    e.hi = std::max(e.hi, hi_lanes[j]);
  }
  for (; i < n; ++i) {
    e.lo = std::min(e.lo, z[i]);
    e.hi = std::max(e.hi, z[i]);
  }
  return e;
}

[[noreturn]] void throw_bad_logit(const char* what) {
  throw NumericError(std::string("SoftmaxStream: ") + what + " logit");
}

struct ChunkSums {
  double s;  // Σ exp(z − shift)
  double t;  // Σ (z − shift)·exp(z − shift)
  double lo;  // min z and max z (only when tracked; NaN lanes may be dropped)
  double hi;
};

// Sums of one sub-chunk relative to `shift`, which must be ≥ every z for the sums to be valid.
// Masked: some z may be −inf, whose (z − shift)·0 must count as 0, not NaN. A NaN z makes t NaN
// (NaN·w is NaN for any w). Track: also return the extremes (for the one-pass path of add).
template <bool Masked, bool Track>
ChunkSums chunk_sums(const double* z, std::size_t n, double shift) {
  const B m(shift);
  B lo(kInf), hi(-kInf);
  auto term = [&](const B& v, B& s, B& t) {
    if constexpr (Track) {
      lo = xsimd::min(lo, v);
      hi = xsimd::max(hi, v);
    }
    // e^d = 2^y with y = d·log2(e): base 2 has an exact argument reduction (core/simd_exp.hpp);
    // t is summed in base-2 units (Σ y·2^y) and converted once per sub-chunk.
    const B y = (v - m) * B(simd::kLog2e);
    const B w = simd::exp2_bounded(y);  // valid for y < 1023.9; larger y means shift was too small
    s += w;
    if constexpr (Masked) {
      t = xsimd::fma(xsimd::select(y == B(-kInf), B(0.0), y), w, t);
    } else {
      t = xsimd::fma(y, w, t);
    }
  };
  // One accumulator pair: an exp costs far more than an add's latency, so more chains buy nothing,
  // and with exp's constants they would not fit in 16 registers (spilled accumulators turned every
  // add into a store-forwarding chain: 25% slower).
  B s0(0.0), t0(0.0);
  std::size_t i = 0;
  for (; i + W <= n; i += W) term(B::load_unaligned(z + i), s0, t0);
  if (i < n) {
    // Pad the last partial batch with `shift` (weight 1, finite) and zero the padded lanes.
    alignas(64) double pad[W];
    alignas(64) double lane[W];
    for (std::size_t j = 0; j < W; ++j) {
      pad[j] = i + j < n ? z[i + j] : z[i];  // z[i] keeps the tracked extremes unchanged
      lane[j] = static_cast<double>(j);
    }
    const auto real = B::load_aligned(lane) < B(static_cast<double>(n - i));
    B s(0.0), t(0.0);
    term(B::load_aligned(pad), s, t);
    s0 += xsimd::select(real, s, B(0.0));
    t0 += xsimd::select(real, t, B(0.0));
  }
  ChunkSums c{xsimd::hadd(s0), kLn2 * xsimd::hadd(t0), kInf, -kInf};
  if constexpr (Track) {
    alignas(64) double lo_lanes[W], hi_lanes[W];
    lo.store_aligned(lo_lanes);
    hi.store_aligned(hi_lanes);
    for (std::size_t j = 0; j < W; ++j) {
      c.lo = std::min(c.lo, lo_lanes[j]);
      c.hi = std::max(c.hi, hi_lanes[j]);
    }
  }
  return c;
}

// The smallest of n floats (a NaN may be dropped: the block kernel reports it).
double float_min(const float* z, std::size_t n) {
  using F = xsimd::batch<float>;
  F lo(std::numeric_limits<float>::infinity());
  std::size_t i = 0;
  for (; i + F::size <= n; i += F::size) lo = xsimd::min(lo, F::load_unaligned(z + i));
  alignas(64) float lanes[F::size];
  lo.store_aligned(lanes);
  float m = *std::min_element(lanes, lanes + F::size);
  for (; i < n; ++i) m = std::min(m, z[i]);
  return m;
}

}  // namespace

void SoftmaxStream::add_sub_chunk(const double* z, std::size_t n) {
  if (n == 0) return;
  // One pass when the running maximum already bounds the sub-chunk (the usual case once a few
  // sub-chunks are in): sums relative to `max` plus the extremes that confirm it. Otherwise (a new
  // maximum, masked or bad logits, an empty stream) the sums are redone after an extremes pass.
  // Both paths use shift = max(running max, sub-chunk max), so they give the same bits.
  if (!softmax.empty()) {
    const ChunkSums c = chunk_sums<false, true>(z, n, softmax.shift);
    if (c.hi <= softmax.shift && c.lo > -kInf) {
      if (std::isnan(c.s) || std::isnan(c.t)) throw_bad_logit("NaN");
      softmax.add_sums(c.s, c.t);
      count += n;
      min = std::min(min, c.lo);
      return;
    }
  }
  const Extremes e = extremes(z, n);
  if (std::isnan(e.lo) || std::isnan(e.hi)) throw_bad_logit("NaN");
  if (e.hi == kInf) throw_bad_logit("+inf");
  if (e.hi == -kInf) {  // all masked: only a NaN could hide here (max() may drop NaN lanes)
    for (std::size_t i = 0; i < n; ++i)
      if (std::isnan(z[i])) throw_bad_logit("NaN");
    count += n;
    min = std::min(min, e.lo);
    return;
  }
  const double shift = std::max(softmax.shift, e.hi);
  const ChunkSums c = e.lo == -kInf ? chunk_sums<true, false>(z, n, shift) : chunk_sums<false, false>(z, n, shift);
  if (std::isnan(c.s) || std::isnan(c.t)) throw_bad_logit("NaN");
  if (shift > softmax.shift) softmax.rescale_to(shift);  // an empty stream just takes the shift
  softmax.add_sums(c.s, c.t);
  softmax.max = shift;
  count += n;
  min = std::min(min, e.lo);
}

void SoftmaxStream::add(const double* z, std::size_t n) {
  for (std::size_t pos = 0; pos < n; pos += kSubChunk) add_sub_chunk(z + pos, std::min(kSubChunk, n - pos));
}

void SoftmaxStream::add_float_sub_chunk(const float* z, std::size_t n) {
  if (n == 0) return;
  // Sums relative to the kernel's reference (the max of the first 16 entries, redone at the exact
  // max when far below it), base e (beta 1), over 8 fixed partials in double.
  static const BlockKernel<float, false, FloatLanes::kWeighted> kernel =
      block_kernel<float, false, FloatLanes::kWeighted>();
  const BlockResult b = kernel(z, nullptr, n, 1.0);
  if (b.bad) {  // NaN sums or a +inf max
    for (std::size_t i = 0; i < n; ++i)
      if (std::isnan(z[i])) throw_bad_logit("NaN");
    throw_bad_logit("+inf");
  }
  count += n;
  min = std::min(min, float_min(z, n));
  if (b.stats.empty()) return;  // all masked
  // The part relative to its own max (shift = max, as the stream keeps it), then merged in order.
  OnlineSoftmax<ExpBase::E, CompensatedSum> part;
  part.shift = b.stats.shift;
  part.max = b.stats.max;
  part.add_sums(b.stats.sum, b.stats.weighted);
  if (part.shift != part.max) part.rescale_to(part.max);
  softmax.merge(part);
}

void SoftmaxStream::add(const float* z, std::size_t n) {
  for (std::size_t pos = 0; pos < n; pos += kSubChunk) add_float_sub_chunk(z + pos, std::min(kSubChunk, n - pos));
}

void SoftmaxStream::merge(const SoftmaxStream& later) {
  if (later.count == 0) return;
  count += later.count;
  min = std::min(min, later.min);
  softmax.merge(later.softmax);  // an all-masked stream adds nothing to the sums
}

}  // namespace sharp::norm

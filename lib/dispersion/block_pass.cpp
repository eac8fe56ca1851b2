// The fused block loop: a law's generator (logit_lanes.hpp) feeds a "term" that holds the lane
// accumulators of one kind of pass. Both are inlined into one loop per (law, pass) pair, so the
// accumulators stay in registers and each logit lives only in a register. The uniform law's top
// pass (the common case, and the numpy reference's point) has its own pipelined loop below.
#include "dispersion/block_pass.hpp"

#include <algorithm>

#include <xsimd/xsimd.hpp>

#include "core/simd_exp.hpp"
#include "dispersion/logit_lanes.hpp"
#include "dispersion/uniform_draws.hpp"

namespace sharp::dispersion {
namespace {

using lanes::B;
using lanes::W;
using Mask = xsimd::batch_bool<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();
static_assert(kSubChunk % UniformDraws::kGroup == 0);

double lane_min(const B& v) {
  alignas(64) double x[W];
  v.store_aligned(x);
  return *std::min_element(x, x + W);
}
double lane_max(const B& v) {
  alignas(64) double x[W];
  v.store_aligned(x);
  return *std::max_element(x, x + W);
}

// Lane extremes of y (masked lanes are left out).
struct Extremes {
  B lo = B(kInf), hi = B(-kInf);
  void add(const B& y) {
    lo = xsimd::min(lo, y);
    hi = xsimd::max(hi, y);
  }
  void add_masked(const B& y, const Mask& valid) {
    lo = xsimd::min(lo, xsimd::select(valid, y, B(kInf)));
    hi = xsimd::max(hi, xsimd::select(valid, y, B(-kInf)));
  }
  void finish(BlockResult& r) const {
    r.y_min = lane_min(lo);
    r.softmax.max = lane_max(hi);
  }
};

// Lane sums of one sub-chunk: s += w, t += x·w for weights w = 2^x.
struct LaneSums {
  B s = B(0.0), t = B(0.0);
  void add(const B& x, const B& w) {
    s += w;
    t = xsimd::fma(x, w, t);
  }
  void end_sub_chunk(BlockResult& r) {
    r.softmax.add_sums(xsimd::hadd(s), xsimd::hadd(t));
    s = B(0.0);
    t = B(0.0);
  }
};

// Every term has add(y, law) and add_masked(y, valid, law), where law.top_weight(y) = 2^y for the
// law's own values (terms that need no weight ignore it), end_sub_chunk and finish.

// SumsFromTop: y ∈ [−C, 0] with C ≤ 866, inside the weights' range, so no range test.
struct TopTerm {
  Extremes extremes;
  LaneSums sums;
  explicit TopTerm(const Pass&) {}
  template <class Law>
  void add(const B& y, const Law& law) {
    extremes.add(y);
    sums.add(y, law.top_weight(y));
  }
  template <class Law>
  void add_masked(const B& y, const Mask& valid, const Law& law) {
    extremes.add_masked(y, valid);
    sums.add(y, xsimd::select(valid, law.top_weight(y), B(0.0)));
  }
  void end_sub_chunk(BlockResult& r) { sums.end_sub_chunk(r); }
  void finish(BlockResult& r) const { extremes.finish(r); }
};

struct ExtremesTerm {
  Extremes extremes;
  explicit ExtremesTerm(const Pass&) {}
  template <class Law>
  void add(const B& y, const Law&) {
    extremes.add(y);
  }
  template <class Law>
  void add_masked(const B& y, const Mask& valid, const Law&) {
    extremes.add_masked(y, valid);
  }
  void end_sub_chunk(BlockResult&) {}
  void finish(BlockResult& r) const { extremes.finish(r); }
};

// SumsFromShift: x = y − shift ≤ 0; simd::exp2_bounded flushes x < −1021 to 0 (then x·0 = 0).
struct ShiftTerm {
  LaneSums sums;
  B shift;
  explicit ShiftTerm(const Pass& p) : shift(p.shift) {}
  template <class Law>
  void add(const B& y, const Law&) {
    const B x = y - shift;
    sums.add(x, simd::exp2_bounded(x));
  }
  template <class Law>
  void add_masked(const B& y, const Mask& valid, const Law&) {
    const B x = y - shift;
    sums.add(x, xsimd::select(valid, simd::exp2_bounded(x), B(0.0)));
  }
  void end_sub_chunk(BlockResult& r) { sums.end_sub_chunk(r); }
  void finish(BlockResult&) const {}
};

// CountOutside: lane counts as doubles (exact: a lane sees at most 2^14 logits per block).
struct CountTerm {
  B low, high, count = B(0.0);
  explicit CountTerm(const Pass& p) : low(p.low), high(p.high) {}
  template <class Law>
  void add(const B& y, const Law&) {
    count += xsimd::select((y < low) || (y > high), B(1.0), B(0.0));
  }
  template <class Law>
  void add_masked(const B& y, const Mask& valid, const Law&) {
    count += xsimd::select(valid && ((y < low) || (y > high)), B(1.0), B(0.0));
  }
  void end_sub_chunk(BlockResult&) {}
  void finish(BlockResult& r) const { r.outside = static_cast<std::uint64_t>(xsimd::hadd(count)); }
};

// Runs `count` logits of `gen` (from the start of a block) through `term` in sub-chunks of
// kSubChunk and returns the term. A final partial step is computed whole and its lanes beyond
// `count` are masked out. Generator and term are taken by value: as locals whose address never
// escapes, they stay in registers (through references GCC kept both in memory: 40% slower).
// Generators with kStaged (long dependency chains: Box–Muller) fill an L1 buffer per sub-chunk
// before the term reads it, same values in the same order: fused, the two chains overflow the
// core's out-of-order window (gaussian row: 0.18 G/s fused, 0.24 staged).
template <class Term, class Gen>
Term stream_logits(Gen gen, std::uint64_t count, Term term, BlockResult& r) {
  constexpr std::size_t kStep = Gen::kStep;
  constexpr std::uint64_t kStepsPerSubChunk = kSubChunk / kStep;
  static_assert(kSubChunk % kStep == 0);
  const auto add = [&](const B& y) { term.add(y, gen); };
  alignas(64) double staged[Gen::kStaged ? kSubChunk : 1];
  std::size_t filled = 0;
  const auto stage = [&](const B& y) {
    y.store_aligned(staged + filled);
    filled += W;
  };
  bool first = true;  // the block's first step patches the row's fixed logits (first_step)
  const auto take_steps = [&](const auto& sink, std::uint64_t m) {
    std::uint64_t k = 0;
    if (first) {
      gen.first_step(sink);
      first = false;
      k = 1;
    }
    for (; k < m; ++k) gen.step(sink);
  };
  for (std::uint64_t steps = count / kStep; steps > 0;) {
    const std::uint64_t m = std::min(steps, kStepsPerSubChunk);
    if constexpr (Gen::kStaged) {
      filled = 0;
      take_steps(stage, m);
      for (std::size_t i = 0; i < filled; i += W) add(B::load_aligned(staged + i));
    } else {
      take_steps(add, m);
    }
    term.end_sub_chunk(r);
    steps -= m;
  }
  const std::size_t rest = static_cast<std::size_t>(count % kStep);
  if (rest > 0) {
    std::size_t slot = 0;
    const auto add_tail = [&](const B& y) {
      alignas(64) double offset[W];
      for (std::size_t l = 0; l < W; ++l) offset[l] = static_cast<double>(Gen::offset(slot + l));
      term.add_masked(y, B::load_aligned(offset) < B(static_cast<double>(rest)), gen);
      slot += W;
    };
    if (first) {
      gen.first_step(add_tail);
    } else {
      gen.step(add_tail);
    }
    term.end_sub_chunk(r);
  }
  return term;
}

// An empty result whose sums (if the pass makes any) are relative to the pass's reference.
BlockResult empty_result(const Pass& pass) {
  BlockResult r;
  if (pass.kind == PassKind::SumsFromTop) r.softmax.shift = 0.0;
  if (pass.kind == PassKind::SumsFromShift) r.softmax.shift = pass.shift;
  return r;
}

template <class Term, class Gen>
BlockResult stream_block(Gen gen, const Pass& pass, std::uint64_t count) {
  BlockResult r = empty_result(pass);
  stream_logits(gen, count, Term(pass), r).finish(r);
  return r;
}

template <class Gen>
BlockResult run_pass(Gen gen, const Pass& pass, std::uint64_t count) {
  switch (pass.kind) {
    case PassKind::SumsFromTop: return stream_block<TopTerm>(gen, pass, count);
    case PassKind::Extremes: return stream_block<ExtremesTerm>(gen, pass, count);
    case PassKind::SumsFromShift: return stream_block<ShiftTerm>(gen, pass, count);
    case PassKind::CountOutside: return stream_block<CountTerm>(gen, pass, count);
  }
  return {};
}

struct ContinuousWeights {
  B top_weight(const B& y) const { return lanes::continuous_top_weight(y); }
};

// The uniform law's top pass over `sub_chunks` whole sub-chunks from `first`: the same values and
// the same term as stream_logits with UniformLanes (same y, same weights, same order of additions
// within a lane), but the draws of sub-chunk j + 1 are made while sub-chunk j is summed (half of
// them by scalar code inside the summing loop; see uniform_draws.hpp). The draws pass through two
// L1 buffers of kSubChunk doubles. Takes and returns the term by value (see stream_logits).
TopTerm uniform_top_sub_chunks(std::uint64_t key, double C, std::uint64_t first, std::uint64_t sub_chunks, TopTerm term,
                               BlockResult& r) {
  constexpr std::size_t kGroup = UniformDraws::kGroup;
  const UniformDraws draws(key);
  alignas(64) double buffer[2][kSubChunk];  // 1 + U of the current and the next sub-chunk
  draws.fill(first, kSubChunk, buffer[0]);
  const B C_(C), minus_2C(-2.0 * C);
  const ContinuousWeights weights;
  // y = (U − 1)·C for the two batches of a group, exactly as UniformLanes forms it.
  const auto add_group = [&](const double* v) {
    term.add(xsimd::fma(B::load_aligned(v), C_, minus_2C), weights);
    term.add(xsimd::fma(B::load_aligned(v + W), C_, minus_2C), weights);
  };
  for (std::uint64_t j = 0; j < sub_chunks; ++j) {
    const double* current = buffer[j & 1];
    double* next = buffer[(j + 1) & 1];
    if (j + 1 < sub_chunks) {
      const std::uint64_t next_first = first + (j + 1) * kSubChunk;
      draws.fill_lanes(next_first, kSubChunk, next);
      UniformDraws::ScalarCursor cursor = draws.scalar_cursor(next_first);
      for (std::size_t i = 0; i < kSubChunk; i += kGroup) {
        cursor.fill_group(next + i);  // integer units: overlaps with the vector work of add_group
        add_group(current + i);
      }
    } else {
      for (std::size_t i = 0; i < kSubChunk; i += kGroup) add_group(current + i);
    }
    term.end_sub_chunk(r);
  }
  return term;
}

BlockResult uniform_pass(std::uint64_t key, double C, const Pass& pass, std::uint64_t first, std::uint64_t count) {
  if (pass.kind != PassKind::SumsFromTop) return run_pass(lanes::UniformLanes(key, C, first), pass, count);
  BlockResult r = empty_result(pass);
  TopTerm term(pass);
  const std::uint64_t whole = count / kSubChunk;
  if (whole > 0) term = uniform_top_sub_chunks(key, C, first, whole, term, r);
  const lanes::UniformLanes rest(key, C, first + whole * kSubChunk);
  stream_logits(rest, count - whole * kSubChunk, term, r).finish(r);
  return r;
}

}  // namespace

void BlockResult::merge(const BlockResult& later) {
  softmax.merge(later.softmax);  // same reference in every block of a pass: no rescale
  y_min = std::min(y_min, later.y_min);
  outside += later.outside;
}

BlockResult block_pass(LogitLaw law, std::uint64_t key, double C, const Pass& pass, std::uint64_t first,
                       std::uint64_t count) {
  switch (law) {
    case LogitLaw::Uniform: return uniform_pass(key, C, pass, first, count);
    case LogitLaw::OneHot: return run_pass(lanes::OneHotLanes(key, C, first), pass, count);
    case LogitLaw::TwoPoint: return run_pass(lanes::TwoPointLanes(key, C, first), pass, count);
    case LogitLaw::Gaussian: return run_pass(lanes::GaussianLanes(key, C, first), pass, count);
  }
  return {};
}

}  // namespace sharp::dispersion

// The per-row dispersion kernel: OpenMP threads take whole blocks of kDispersionBlock logits, each
// block is one fused pass (block_pass.hpp), and the block results are merged in block order (never
// in completion order), so any thread count gives the same bits.
//
// Why the sums are taken relative to the top δ/θ and when they are redone: every law here lies in
// [0, δ], so y = (z − δ/θ)·log2(e) ≤ 0 and 2^y cannot overflow; one pass gives s, t and the extremes
// with no max pass first. The price is in the entropy H = ln s − ln 2·t/s: relative to the top,
// t/s = t*/s* + y_max (t*, s* relative to the true max), so H carries an extra absolute error of
// about ln 2·|y_max|·(relative error of s and t). For the laws here y_max is exactly 0 (one-hot,
// two-point, gaussian once a logit clips) or about −δ/(θn) (uniform), so this costs nothing —
// except in short or odd rows, where the max lies far below the top and H may be small (n = 1:
// H = 0 exactly). When ln 2·|y_max| > H/64 the sums are redone relative to y_max (known by then):
// one more pass, only there. Above δ/θ = 600 the weights could underflow, so the row takes the
// two-pass path: extremes, then sums relative to y_max.
#include "dispersion/dispersion_row.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <numbers>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/parallel_for.hpp"
#include "dispersion/block_pass.hpp"

namespace sharp::dispersion {
namespace {

constexpr std::uint64_t kGroupBlocks = 1024;  // block results held at once (bounded memory)
static_assert(kDispersionBlock % kSubChunk == 0);

struct RowSpec {
  LogitLaw law;
  std::uint64_t n;
  std::uint64_t key;
  double top;  // δ/θ
  double C;  // δ/θ·log2(e): the y of the bottom of the range is −C
};

RowSpec checked_row(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key, int threads) {
  if (n == 0) throw BadInput("n must be >= 1");
  if (!(spread >= 0.0) || !std::isfinite(spread))
    throw BadInput("spread must be finite and >= 0 (got " + std::to_string(spread) + ")");
  if (!(theta > 0.0) || !std::isfinite(theta))
    throw BadInput("theta must be finite and > 0 (got " + std::to_string(theta) + ")");
  if (threads < 1) throw BadInput("threads must be >= 1 (got " + std::to_string(threads) + ")");
  const double top = spread / theta, C = top * std::numbers::log2e;
  if (!std::isfinite(C)) throw BadInput("spread/theta is too large (" + std::to_string(top) + ")");
  return {law, n, key, top, C};
}

std::uint64_t block_count(std::uint64_t n) { return (n - 1) / kDispersionBlock + 1; }

// Calls body(block) for blocks [first, first + count) on `threads` threads; the error of the
// lowest failing block is rethrown.
template <class Body>
void for_blocks(std::uint64_t first, std::uint64_t count, int threads, Body&& body) {
  parallel_for(count, Loop{"dispersion/blocks", threads}, [&](std::size_t b) { body(first + b); });
}

// One pass over the whole row, block results merged in block order.
BlockResult row_pass(const RowSpec& row, const Pass& pass, int threads) {
  const std::uint64_t blocks = block_count(row.n);
  std::vector<BlockResult> part(static_cast<std::size_t>(std::min(blocks, kGroupBlocks)));
  BlockResult total;
  for (std::uint64_t group = 0; group < blocks; group += kGroupBlocks) {
    const std::uint64_t count = std::min(kGroupBlocks, blocks - group);
    for_blocks(group, count, threads, [&](std::uint64_t b) {
      const std::uint64_t first = b * kDispersionBlock;
      part[b - group] = block_pass(row.law, row.key, row.C, pass, first, std::min(kDispersionBlock, row.n - first));
    });
    for (std::uint64_t j = 0; j < count; ++j) total.merge(part[j]);
  }
  return total;
}

}  // namespace

RowStatistics row_statistics(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key,
                             int threads) {
  const RowSpec row = checked_row(law, n, spread, theta, key, threads);
  RowStatistics r{};
  r.top = row.top;
  if (row.top <= kMaxTopRelativeSpread) {
    const BlockResult from_top = row_pass(row, Pass{PassKind::SumsFromTop}, threads);
    r.y_min = from_top.y_min;
    r.softmax = from_top.softmax;  // shift 0, max y_max
    // The top is close enough to the max (see above).
    if (std::numbers::ln2 * std::fabs(r.y_max()) <= r.entropy() / 64) return r;
  } else {
    const BlockResult extremes = row_pass(row, Pass{PassKind::Extremes}, threads);
    r.y_min = extremes.y_min;
    r.softmax.max = extremes.softmax.max;
  }
  const double y_max = r.y_max();
  r.softmax = row_pass(row, Pass{PassKind::SumsFromShift, y_max}, threads).softmax;  // shift y_max
  r.softmax.max = y_max;  // (that pass does not track it)
  return r;
}

std::uint64_t count_outside(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key, int threads,
                            const RowStatistics& stats, double lower, double upper) {
  const RowSpec row = checked_row(law, n, spread, theta, key, threads);
  // α_k = 2^(y_k − r)/s lies outside [lower, upper] exactly when y_k lies outside these.
  const double s = stats.softmax.total_sum();
  const double y_low = stats.softmax.shift + std::log2(s * lower);
  const double y_high = stats.softmax.shift + std::log2(s * upper);
  if (!(stats.y_max() > y_high || stats.y_min < y_low)) return 0;  // the extremes are inside
  Pass pass{PassKind::CountOutside};
  pass.low = y_low;
  pass.high = y_high;
  return row_pass(row, pass, threads).outside;
}

DispersionRow dispersion_row(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key,
                             int threads) {
  const RowStatistics stats = row_statistics(law, n, spread, theta, key, threads);
  DispersionRow result{};
  result.alpha_max = stats.alpha_max();
  result.alpha_min = stats.alpha_min();
  result.entropy = stats.entropy();
  result.violations = count_outside(law, n, spread, theta, key, threads, stats,
                                    bound_lower(n, spread, theta) * (1.0 - kViolationTolerance),
                                    bound_upper(n, spread, theta) * (1.0 + kViolationTolerance));
  return result;
}

}  // namespace sharp::dispersion

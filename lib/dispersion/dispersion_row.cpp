// The per-row dispersion kernel: blocks of kDispersionBlock logits are generated in L1-sized
// chunks and streamed through SoftmaxStream; OpenMP threads take whole blocks, and the block
// statistics are merged in block order (never in completion order), so any thread count gives the
// same bits.
#include "dispersion/dispersion_row.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace sharp::dispersion {
namespace {

using stats::SoftmaxStream;

constexpr std::size_t kChunk = 2048;            // logits generated at a time: 16 KiB, stays in L1
constexpr std::uint64_t kGroupBlocks = 1024;    // block statistics held at once (bounded memory)
static_assert(kChunk % SoftmaxStream::kSubChunk == 0 && kDispersionBlock % kChunk == 0);

struct RowSpec {
  LogitLaw law;
  std::uint64_t n;
  double spread;
  double inv_theta;
  std::uint64_t key;
};

void check_arguments(std::uint64_t n, double spread, double theta, int threads) {
  if (n == 0) throw BadInput("n must be >= 1");
  if (!(spread >= 0.0) || !std::isfinite(spread))
    throw BadInput("spread must be finite and >= 0 (got " + std::to_string(spread) + ")");
  if (!(theta > 0.0) || !std::isfinite(theta))
    throw BadInput("theta must be finite and > 0 (got " + std::to_string(theta) + ")");
  if (threads < 1) throw BadInput("threads must be >= 1 (got " + std::to_string(threads) + ")");
}

std::uint64_t block_count(std::uint64_t n) { return (n - 1) / kDispersionBlock + 1; }

// Calls body(block) for blocks [first, first + count) on `threads` threads. An exception in a
// block is rethrown after the parallel region (it must not leave an OpenMP region).
template <class Body>
void for_blocks(std::uint64_t first, std::uint64_t count, int threads, Body&& body) {
  std::exception_ptr failure;
  const auto m = static_cast<std::int64_t>(count);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1 && count > 1)
  for (std::int64_t b = 0; b < m; ++b) {
    try {
      body(first + static_cast<std::uint64_t>(b));
    } catch (...) {
#pragma omp critical(sharp_dispersion_failure)
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

// Statistics of block b (logits [b·B, min(n, (b+1)·B)) ).
SoftmaxStream block_stream(const RowSpec& row, std::uint64_t block) {
  alignas(64) double z[kChunk];
  SoftmaxStream stream;
  const std::uint64_t begin = block * kDispersionBlock;
  const std::uint64_t end = std::min(row.n, begin + kDispersionBlock);
  for (std::uint64_t first = begin; first < end; first += kChunk) {
    const auto m = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - first));
    generate_scaled_logits(row.law, row.spread, row.n, row.key, first, row.inv_theta, z, m);
    stream.add(z, m);
  }
  return stream;
}

SoftmaxStream row_stream(const RowSpec& row, int threads) {
  const std::uint64_t blocks = block_count(row.n);
  std::vector<SoftmaxStream> part(static_cast<std::size_t>(std::min(blocks, kGroupBlocks)));
  SoftmaxStream total;
  for (std::uint64_t group = 0; group < blocks; group += kGroupBlocks) {
    const std::uint64_t count = std::min(kGroupBlocks, blocks - group);
    for_blocks(group, count, threads, [&](std::uint64_t b) { part[b - group] = block_stream(row, b); });
    for (std::uint64_t j = 0; j < count; ++j) total.merge(part[j]);
  }
  return total;
}

// Logits of the row outside [z_low, z_high] (integer counts: any order is exact).
std::uint64_t count_z_outside(const RowSpec& row, double z_low, double z_high, int threads) {
  const std::uint64_t blocks = block_count(row.n);
  std::vector<std::uint64_t> part(static_cast<std::size_t>(std::min(blocks, kGroupBlocks)));
  std::uint64_t total = 0;
  for (std::uint64_t group = 0; group < blocks; group += kGroupBlocks) {
    const std::uint64_t count = std::min(kGroupBlocks, blocks - group);
    for_blocks(group, count, threads, [&](std::uint64_t b) {
      alignas(64) double z[kChunk];
      const std::uint64_t begin = b * kDispersionBlock;
      const std::uint64_t end = std::min(row.n, begin + kDispersionBlock);
      std::uint64_t outside = 0;
      for (std::uint64_t first = begin; first < end; first += kChunk) {
        const auto m = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - first));
        generate_scaled_logits(row.law, row.spread, row.n, row.key, first, row.inv_theta, z, m);
        for (std::size_t j = 0; j < m; ++j) outside += (z[j] > z_high) | (z[j] < z_low);
      }
      part[b - group] = outside;
    });
    for (std::uint64_t j = 0; j < count; ++j) total += part[j];
  }
  return total;
}

}  // namespace

SoftmaxStream dispersion_stream(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key,
                                int threads) {
  check_arguments(n, spread, theta, threads);
  return row_stream(RowSpec{law, n, spread, 1.0 / theta, key}, threads);
}

std::uint64_t count_outside(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key,
                            int threads, const SoftmaxStream& stream, double lower, double upper) {
  check_arguments(n, spread, theta, threads);
  // α_k = exp(z_k − max)/s lies outside [lower, upper] exactly when z_k lies outside these.
  const double s = stream.total_sum();
  const double z_low = stream.max + std::log(s * lower);
  const double z_high = stream.max + std::log(s * upper);
  if (!(stream.max > z_high || stream.min < z_low)) return 0;  // the extremes are inside
  return count_z_outside(RowSpec{law, n, spread, 1.0 / theta, key}, z_low, z_high, threads);
}

DispersionRow dispersion_row(LogitLaw law, std::uint64_t n, double spread, double theta, std::uint64_t key,
                             int threads) {
  const SoftmaxStream stream = dispersion_stream(law, n, spread, theta, key, threads);
  const double s = stream.total_sum();
  DispersionRow result{};
  result.alpha_max = 1.0 / s;  // exp(max − max)/s
  result.alpha_min = std::exp(stream.min - stream.max) / s;
  result.entropy = stream.entropy();
  result.violations = count_outside(law, n, spread, theta, key, threads, stream,
                                    bound_lower(n, spread, theta) * (1.0 - kViolationTolerance),
                                    bound_upper(n, spread, theta) * (1.0 + kViolationTolerance));
  return result;
}

}  // namespace sharp::dispersion

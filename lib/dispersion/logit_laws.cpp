// Vectorised logit generation: each law computes a batch of lanes with the same instructions as
// its tail, so the values do not depend on where a chunk starts.
#include "dispersion/logit_laws.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "rng/counter_lanes.hpp"
#include "rng/counter_rng.hpp"

namespace sharp::dispersion {
namespace {

using rng::DoubleBatch;
using rng::U64Batch;
constexpr std::size_t W = DoubleBatch::size;

// Calls make_batch() for every batch of W logits and stores `count` of them; the last batch is
// computed whole and only its first lanes are kept.
template <class MakeBatch>
void fill_batches(double* out, std::size_t count, MakeBatch&& make_batch) {
  std::size_t j = 0;
  for (; j + W <= count; j += W) make_batch().store_unaligned(out + j);
  if (j < count) {
    alignas(64) double tail[W];
    make_batch().store_aligned(tail);
    std::copy(tail, tail + (count - j), out + j);
  }
}

void uniform_logits(double spread, std::uint64_t key, std::uint64_t first, double scale, double* out,
                    std::size_t count) {
  rng::CounterLanes lanes(rng::stream_params(key), first);
  const DoubleBatch d(spread), s(scale);
  fill_batches(out, count, [&] { return (d * lanes.next_uniform()) * s; });
}

void two_point_logits(double spread, std::uint64_t key, std::uint64_t first, double scale, double* out,
                      std::size_t count) {
  rng::CounterLanes lanes(rng::stream_params(key), first);
  // δ where the top bit is set, +0 elsewhere: an exact bit mask, no rounding.
  const U64Batch spread_bits(__builtin_bit_cast(std::uint64_t, spread));
  const DoubleBatch s(scale);
  fill_batches(out, count, [&] {
    const U64Batch mask = U64Batch(0) - (lanes.next_bits() >> 63);
    return xsimd::bitwise_cast<DoubleBatch>(mask & spread_bits) * s;
  });
  // The fixed indices 0 (= δ) and 1 (= 0) so the row holds both values.
  if (first == 0 && count > 0) out[0] = spread * scale;
  if (first <= 1 && first + count > 1) out[1 - first] = 0.0 * scale;
}

void gaussian_logits(double spread, std::uint64_t key, std::uint64_t first, double scale, double* out,
                     std::size_t count) {
  rng::fill_normal(key, first, out, count);
  const DoubleBatch half(spread / 2), quarter(spread / 4), top(spread), s(scale);
  auto law = [&](const DoubleBatch& x) {
    return xsimd::min(xsimd::max(xsimd::fma(quarter, x, half), DoubleBatch(0.0)), top) * s;
  };
  std::size_t j = 0;
  for (; j + W <= count; j += W) law(DoubleBatch::load_unaligned(out + j)).store_unaligned(out + j);
  if (j < count) {
    alignas(64) double tail[W] = {};
    std::copy(out + j, out + count, tail);
    law(DoubleBatch::load_aligned(tail)).store_aligned(tail);
    std::copy(tail, tail + (count - j), out + j);
  }
}

void one_hot_logits(double spread, std::uint64_t first, double scale, double* out, std::size_t count) {
  std::fill(out, out + count, 0.0 * scale);
  if (first == 0 && count > 0) out[0] = spread * scale;
}

}  // namespace

LogitLaw parse_logit_law(std::string_view name) {
  if (name == "uniform") return LogitLaw::Uniform;
  if (name == "one-hot") return LogitLaw::OneHot;
  if (name == "two-point") return LogitLaw::TwoPoint;
  if (name == "gaussian") return LogitLaw::Gaussian;
  throw BadInput("unknown logit law '" + std::string(name) + "' (allowed: uniform, one-hot, two-point, gaussian)");
}

std::string_view logit_law_name(LogitLaw law) {
  switch (law) {
    case LogitLaw::Uniform: return "uniform";
    case LogitLaw::OneHot: return "one-hot";
    case LogitLaw::TwoPoint: return "two-point";
    case LogitLaw::Gaussian: return "gaussian";
  }
  throw BadInput("unknown logit law value " + std::to_string(static_cast<int>(law)));
}

const std::vector<std::string>& logit_law_names() {
  static const std::vector<std::string> names{"uniform", "one-hot", "two-point", "gaussian"};
  return names;
}

void generate_scaled_logits(LogitLaw law, double spread, std::uint64_t n, std::uint64_t key, std::uint64_t first,
                            double scale, double* out, std::size_t count) {
  if (!(spread >= 0.0) || !std::isfinite(spread))
    throw BadInput("logit spread must be finite and >= 0 (got " + std::to_string(spread) + ")");
  if (n == 0) throw BadInput("a row needs n >= 1 logits");
  if (first > n || count > n - first)
    throw BadInput("logits " + std::to_string(first) + ".." + std::to_string(first + count) + " are outside a row of " +
                   std::to_string(n));
  switch (law) {
    case LogitLaw::Uniform: return uniform_logits(spread, key, first, scale, out, count);
    case LogitLaw::OneHot: return one_hot_logits(spread, first, scale, out, count);
    case LogitLaw::TwoPoint: return two_point_logits(spread, key, first, scale, out, count);
    case LogitLaw::Gaussian: return gaussian_logits(spread, key, first, scale, out, count);
  }
  throw BadInput("unknown logit law value " + std::to_string(static_cast<int>(law)));
}

void generate_logits(LogitLaw law, double spread, std::uint64_t n, std::uint64_t key, std::uint64_t first, double* out,
                     std::size_t count) {
  generate_scaled_logits(law, spread, n, key, first, 1.0, out, count);
}

}  // namespace sharp::dispersion

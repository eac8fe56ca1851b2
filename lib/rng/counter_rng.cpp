// Vectorised fills of the counter-based stream. Every function computes lanes independently with
// the same instructions as its scalar counterpart, which is what makes them bit-identical.
#include "rng/counter_rng.hpp"

#include <algorithm>

#include "rng/box_muller.hpp"
#include "rng/counter_lanes.hpp"

namespace sharp::rng {

void fill_bits(std::uint64_t key, std::uint64_t first, std::uint64_t* out, std::size_t count) {
  constexpr std::size_t W = CounterLanes::size;
  CounterLanes lanes(stream_params(key), first);
  std::size_t j = 0;
  for (; j + W <= count; j += W) lanes.next_bits().store_unaligned(out + j);
  if (j < count) {
    alignas(64) std::uint64_t tail[W];
    lanes.next_bits().store_aligned(tail);
    std::copy(tail, tail + (count - j), out + j);
  }
}

void fill_uniform(std::uint64_t key, std::uint64_t first, double* out, std::size_t count) {
  constexpr std::size_t W = CounterLanes::size;
  CounterLanes lanes(stream_params(key), first);
  std::size_t j = 0;
  for (; j + W <= count; j += W) lanes.next_uniform().store_unaligned(out + j);
  if (j < count) {
    alignas(64) double tail[W];
    lanes.next_uniform().store_aligned(tail);
    std::copy(tail, tail + (count - j), out + j);
  }
}

double normal(std::uint64_t key, std::uint64_t index) {
  const StreamParams p = stream_params(child_key(key, kNormalLabel));
  const std::uint64_t pair = index >> 1;
  const auto [c, s] = box_muller(U64Batch(bits_at(p, 2 * pair)), U64Batch(bits_at(p, 2 * pair + 1)));
  return (index & 1) ? s.get(0) : c.get(0);
}

void fill_normal(std::uint64_t key, std::uint64_t first, double* out, std::size_t count) {
  if (count == 0) return;
  constexpr std::size_t W = CounterLanes::size;
  const StreamParams p = stream_params(child_key(key, kNormalLabel));
  const std::uint64_t end = first + count;  // one past the last index
  std::uint64_t pair = first >> 1;
  const std::uint64_t last_pair = (end - 1) >> 1;
  // Lane j of `radius` holds word 2(pair+j), of `angle` word 2(pair+j)+1.
  CounterLanes radius(p, 2 * pair, 2), angle(p, 2 * pair + 1, 2);
  alignas(64) double cos_out[W], sin_out[W];
  for (; pair <= last_pair; pair += W) {
    const auto [c, s] = box_muller(radius.next_bits(), angle.next_bits());
    c.store_aligned(cos_out);
    s.store_aligned(sin_out);
    for (std::size_t j = 0; j < W; ++j) {
      const std::uint64_t even = 2 * (pair + j);
      if (even >= first && even < end) out[even - first] = cos_out[j];
      if (even + 1 >= first && even + 1 < end) out[even + 1 - first] = sin_out[j];
    }
  }
}

}  // namespace sharp::rng

#pragma once
// The uniform law's draws 1 + U_i (U_i = rng::uniform(key, i), bit for bit) for one sub-chunk of a
// row, made half by SIMD lanes and half by scalar integer code. Why: the dispersion kernel's top
// pass is bound by the vector unit (SplitMix64's 64-bit multiplies are emulated on AVX2, then exp),
// while the scalar integer units sit idle. So the kernel computes exp for sub-chunk j while the
// scalar half of sub-chunk j + 1's random numbers is made in the same loop (fill_group), and only
// the other half takes vector instructions (fill_lanes). Measured on the development machine
// (AVX2 build on a Zen 5 core, bench block_top_pass/uniform): 0.62 G logits per CPU-second with
// the draws made before the sums, 0.90–0.94 with the scalar half overlapped. The 50/50 split was
// the best of 0/25/50/75/100% scalar there.
// Layout: in each group of kGroup = 8 consecutive indices, the first W = 4 come from lanes, the
// last 4 from scalar code. Output is in index order: out[j] = 1 + U_{first + j}.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <xsimd/xsimd.hpp>

#include "core/hash.hpp"
#include "rng/counter_lanes.hpp"
#include "rng/counter_rng.hpp"

namespace sharp::dispersion {

class UniformDraws {
 public:
  using B = xsimd::batch<double>;
  using U64Batch = rng::U64Batch;
  static constexpr std::size_t W = B::size;
  static constexpr std::size_t kGroup = 2 * W;
  static constexpr std::uint64_t kOneBits = 0x3ff0000000000000ULL;

  explicit UniformDraws(std::uint64_t key) : p_(rng::stream_params(key)) {}

  // The lane half of [first, first + count): out[8g + l] for l < 4. count is a multiple of kGroup.
  void fill_lanes(std::uint64_t first, std::size_t count, double* out) const {
    alignas(64) std::uint64_t start[W];
    for (std::size_t l = 0; l < W; ++l) start[l] = p_.seed + (first + l + 1) * p_.gamma;
    U64Batch state = U64Batch::load_aligned(start);  // SplitMix64 counters of the group's lanes
    const U64Batch step(kGroup * p_.gamma);
    for (std::size_t g = 0; g < count; g += kGroup) {
      xsimd::bitwise_cast<B>((rng::mix64_lanes(state) >> 12) | U64Batch(kOneBits)).store_unaligned(out + g);
      state += step;
    }
  }

  // Scalar half, one group at a time, from index `first` on (a multiple of kGroup).
  class ScalarCursor {
   public:
    ScalarCursor(rng::StreamParams p, std::uint64_t first)
        : counter_(p.seed + (first + W + 1) * p.gamma), gamma_(p.gamma) {}
    // out[W..2W) of the next group (out points at the group's first index).
    void fill_group(double* out) {
      for (std::size_t l = 0; l < W; ++l) {
        std::uint64_t bits = (mix64(counter_ + l * gamma_) >> 12) | kOneBits;
        // An empty asm that takes the value in a general-purpose register: it keeps the compiler
        // from vectorizing these four (the whole point is to use the scalar units). No instruction.
        asm("" : "+r"(bits));
        std::memcpy(out + W + l, &bits, sizeof bits);
      }
      counter_ += kGroup * gamma_;
    }

   private:
    std::uint64_t counter_;  // SplitMix64 counter of the group's first scalar index
    std::uint64_t gamma_;
  };
  ScalarCursor scalar_cursor(std::uint64_t first) const { return ScalarCursor(p_, first); }

  // Both halves of [first, first + count) (count a multiple of kGroup), not overlapped with anything.
  void fill(std::uint64_t first, std::size_t count, double* out) const {
    fill_lanes(first, count, out);
    ScalarCursor cursor = scalar_cursor(first);
    for (std::size_t g = 0; g < count; g += kGroup) cursor.fill_group(out + g);
  }

 private:
  rng::StreamParams p_;
};

}  // namespace sharp::dispersion

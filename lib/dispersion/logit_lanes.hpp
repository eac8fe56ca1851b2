#pragma once
// The logit laws of logit_laws.hpp on SIMD lanes, in the form the dispersion kernel consumes them:
// y = (z − z_top)·log2(e) for z = e/θ and z_top = δ/θ, the top of the range, so every y lies in
// [−C, 0] with C = (δ/θ)·log2(e), and a softmax weight is 2^y. Base 2 because 2^y has an exact
// argument reduction (core/simd_exp.hpp). The values are computed in registers from the
// counter-based random bits and never stored; each y is one rounding of the law's ingredients:
//   uniform    y = (U − 1)·C                    as fma(1 + U, C, −2C)     (1 + U ∈ [1, 2) is exact)
//   one-hot    y_0 = 0, every other y_i = −C
//   two-point  y_i = 0 or −C by the top bit of rng::bits(key, i); y_0 = 0 and y_1 = −C fixed
//   gaussian   y_i = clip((N_i − 2)·C/4, −C, 0) as clip(fma(C/4, N_i, −C/2), −C, 0)
// so z_top + y·ln 2 equals generate_scaled_logits' z up to rounding (tested), not bit for bit. The
// kernel uses only these values in all its passes (sums, extremes, counts), so the passes agree.
//
// A generator covers consecutive indices from `first` (even: the gaussian law works in pairs).
// step(f) produces the next kStep logits and calls f(y) once per batch of W lanes; lane l of the
// j-th batch of a step holds the logit at (step start) + offset(j·W + l). first_step(f) is the
// same, with the row's fixed logits patched in when `first` is 0 (the kernel calls it for the
// first step of every block). top_weight(y) = 2^y for the y it makes: an exp for the continuous
// laws, a select between the two possible weights for one-hot and two-point. kStaged asks the
// kernel to buffer a sub-chunk of values before summing them (block_pass.cpp).
#include <cstddef>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "core/simd_exp.hpp"
#include "rng/box_muller.hpp"
#include "rng/counter_lanes.hpp"
#include "rng/counter_rng.hpp"

namespace sharp::dispersion::lanes {

using B = xsimd::batch<double>;
using rng::U64Batch;
inline constexpr std::size_t W = B::size;
inline constexpr std::uint64_t kOneBits = 0x3ff0000000000000ULL;  // 1.0: (bits >> 12) | kOneBits = 1 + U

// True in lane l only (to patch a row's fixed logits into its first batch).
inline xsimd::batch_bool<double> lane_is(std::size_t l) {
  alignas(64) double index[W];
  for (std::size_t j = 0; j < W; ++j) index[j] = static_cast<double>(j);
  return B::load_aligned(index) == B(static_cast<double>(l));
}

// 2^y for y ∈ [−C, 0] with C ≤ 1021 (the kernel guarantees it for its top-relative pass).
inline B continuous_top_weight(const B& y) { return simd::exp2_in_range(y); }

// The weights of a law with only two values, 0 (weight 1) and −C (weight 2^−C, the same bits as
// computing it lane by lane): no exp per logit.
class TwoValueWeights {
 public:
  explicit TwoValueWeights(double C) : bottom_weight_(simd::exp2_bounded(-C)) {}
  // y is +0 or −C: the sign bit tells them apart (for C = 0, −0 gets 2^−0 = 1, right too).
  B operator()(const B& y) const {
#if defined(__AVX2__) && !defined(__AVX512F__)
    return _mm256_blendv_pd(_mm256_set1_pd(1.0), bottom_weight_, y);  // by each lane's sign bit
#else
    return xsimd::select(y < B(0.0), bottom_weight_, B(1.0));
#endif
  }

 private:
  B bottom_weight_;
};

class UniformLanes {
 public:
  static constexpr std::size_t kStep = W;
  static constexpr bool kStaged = false;
  static constexpr std::size_t offset(std::size_t slot) { return slot; }

  UniformLanes(std::uint64_t key, double C, std::uint64_t first)
      : lanes_(rng::stream_params(key), first), C_(C), minus_2C_(-2.0 * C) {}

  template <class F>
  void step(F&& f) {
    // (bits >> 12) | 1.0's exponent = 1 + U with U = rng::uniform(key, i) (unit_from_bits without the −1).
    const U64Batch bits = lanes_.next_bits();
    f(xsimd::fma(xsimd::bitwise_cast<B>((bits >> 12) | U64Batch(kOneBits)), C_, minus_2C_));
  }
  template <class F>
  void first_step(F&& f) {
    step(f);
  }
  B top_weight(const B& y) const { return continuous_top_weight(y); }

 private:
  rng::CounterLanes lanes_;
  B C_, minus_2C_;
};

class OneHotLanes {
 public:
  static constexpr std::size_t kStep = W;
  static constexpr bool kStaged = false;
  static constexpr std::size_t offset(std::size_t slot) { return slot; }

  OneHotLanes(std::uint64_t /*key*/, double C, std::uint64_t first)
      : bottom_(-C), weights_(C), row_start_(first == 0) {}

  template <class F>
  void step(F&& f) {
    f(bottom_);
  }
  template <class F>
  void first_step(F&& f) {
    // Lane 0 is index 0 at the row start: the one logit at the top, y = 0.
    f(row_start_ ? xsimd::select(lane_is(0), B(0.0), bottom_) : bottom_);
  }
  B top_weight(const B& y) const { return weights_(y); }

 private:
  B bottom_;
  TwoValueWeights weights_;
  bool row_start_;
};

class TwoPointLanes {
 public:
  static constexpr std::size_t kStep = W;
  static constexpr bool kStaged = false;
  static constexpr std::size_t offset(std::size_t slot) { return slot; }

  TwoPointLanes(std::uint64_t key, double C, std::uint64_t first)
      : lanes_(rng::stream_params(key), first), bottom_(-C), weights_(C), row_start_(first == 0) {}

  template <class F>
  void step(F&& f) {
    f(next());
  }
  template <class F>
  void first_step(F&& f) {
    B y = next();
    if (row_start_) {  // index 0 at the top, index 1 at the bottom: the row holds both values
      y = xsimd::select(lane_is(0), B(0.0), y);
      y = xsimd::select(lane_is(1), bottom_, y);
    }
    f(y);
  }
  B top_weight(const B& y) const { return weights_(y); }

 private:
  // 0 where the top random bit is set (e = δ), −C elsewhere (e = 0): a sign test of the bits.
  B next() {
    const U64Batch bits = lanes_.next_bits();
#if defined(__AVX2__) && !defined(__AVX512F__)
    // blendv picks by each lane's top bit: one instruction.
    return _mm256_blendv_pd(bottom_, _mm256_setzero_pd(), _mm256_castsi256_pd(bits));
#else
    const U64Batch all_ones_if_clear = (bits >> 63) - U64Batch(1);
    return xsimd::bitwise_cast<B>(xsimd::bitwise_cast<U64Batch>(bottom_) & all_ones_if_clear);
#endif
  }
  rng::CounterLanes lanes_;
  B bottom_;
  TwoValueWeights weights_;
  bool row_start_;
};

class GaussianLanes {
 public:
  // One Box–Muller step makes W pairs: the cosines are the even indices, the sines the odd ones.
  static constexpr std::size_t kStep = 2 * W;
  // Box–Muller (log, sqrt, sin, cos) is one long dependency chain: staged through L1 before the sums.
  static constexpr bool kStaged = true;
  static constexpr std::size_t offset(std::size_t slot) { return slot < W ? 2 * slot : 2 * (slot - W) + 1; }

  GaussianLanes(std::uint64_t key, double C, std::uint64_t first)
      : GaussianLanes(rng::stream_params(rng::child_key(key, rng::kNormalLabel)), C, first / 2) {}

  // flatten: GCC would otherwise call box_muller out of line, and a call spills every live vector
  // register once per step (measured on the whole row: 0.22 G/s without, 0.245 with).
  template <class F>
  [[gnu::flatten]] void step(F&& f) {
    // The words of rng::normal: radius from word 2p, angle from word 2p + 1 of the normal sub-stream.
    const auto [cos_part, sin_part] = rng::box_muller(radius_.next_bits(), angle_.next_bits());
    f(law(cos_part));
    f(law(sin_part));
  }
  template <class F>
  void first_step(F&& f) {
    step(f);
  }
  B top_weight(const B& y) const { return continuous_top_weight(y); }

 private:
  GaussianLanes(rng::StreamParams p, double C, std::uint64_t pair)
      : radius_(p, 2 * pair, 2), angle_(p, 2 * pair + 1, 2), quarter_(C / 4), minus_half_(-C / 2), bottom_(-C) {}
  // e = clip(δ/2 + (δ/4)·N, 0, δ) shifted and scaled: y = clip((C/4)·N − C/2, −C, 0).
  B law(const B& normal) const {
    return xsimd::min(xsimd::max(xsimd::fma(quarter_, normal, minus_half_), bottom_), B(0.0));
  }
  rng::CounterLanes radius_, angle_;
  B quarter_, minus_half_, bottom_;
};

}  // namespace sharp::dispersion::lanes

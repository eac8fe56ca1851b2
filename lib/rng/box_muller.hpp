#pragma once
// Box–Muller on SIMD lanes: two independent standard normals per pair of 64-bit random words.
// The angle is built so that xsimd's sin/cos always take the same code path whatever the other
// lanes hold (xsimd picks its argument reduction from all lanes at once): a uniform quadrant q
// (top 2 bits of the second word) plus a = π/2·f − π/4, |a| ≤ π/4, from the next 52 bits.
// θ = q·π/2 + a is uniform on a full turn; cos θ and sin θ follow from cos a and sin a by exact
// swaps and sign flips. So each lane is a pure function of its own two words.
#include <utility>

#include "rng/counter_lanes.hpp"

namespace sharp::rng {

// (r·cos θ, r·sin θ) with r = sqrt(−2 ln(1 − u)), u = unit_from_bits(radius_bits) ∈ [0, 1).
inline std::pair<DoubleBatch, DoubleBatch> box_muller(const U64Batch& radius_bits, const U64Batch& angle_bits) {
  const DoubleBatch u = unit_from_bits(radius_bits);
  // 1 − u is exact (u is on the 2^-52 grid) and ≥ 2^-52, so the log is finite and r ≤ 8.49.
  const DoubleBatch r = xsimd::sqrt(DoubleBatch(-2.0) * xsimd::log(DoubleBatch(1.0) - u));

  const DoubleBatch f = unit_from_bits(angle_bits << 2);
  const DoubleBatch a = xsimd::fma(DoubleBatch(1.5707963267948966), f, DoubleBatch(-0.7853981633974483));
  const auto [sin_a, cos_a] = xsimd::sincos(a);

  const U64Batch q = angle_bits >> 62;
  const U64Batch swap = U64Batch(0) - (q & U64Batch(1));  // all ones for odd quadrants
  const U64Batch c_bits = xsimd::bitwise_cast<U64Batch>(cos_a);
  const U64Batch s_bits = xsimd::bitwise_cast<U64Batch>(sin_a);
  const U64Batch x_bits = c_bits ^ ((c_bits ^ s_bits) & swap);
  const U64Batch y_bits = s_bits ^ ((c_bits ^ s_bits) & swap);
  // cos θ is negative-of-(x) in quadrants 1, 2; sin θ in quadrants 2, 3.
  const U64Batch cos_sign = ((q ^ (q >> 1)) & U64Batch(1)) << 63;
  const U64Batch sin_sign = (q >> 1) << 63;
  const DoubleBatch cos_t = xsimd::bitwise_cast<DoubleBatch>(x_bits ^ cos_sign);
  const DoubleBatch sin_t = xsimd::bitwise_cast<DoubleBatch>(y_bits ^ sin_sign);
  return {r * cos_t, r * sin_t};
}

}  // namespace sharp::rng

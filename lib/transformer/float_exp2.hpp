#pragma once
// 2^y on float lanes for the attention weights of float models (blockwise_attention.cpp): y = β·log2(e)·
// (z − m) ≤ 0 relative to the row's running max m. Twice the lanes of the library's double exp
// (core/simd_exp.hpp), which the double path keeps. Local to the transformer until the library has a
// float exp of its own.
//
// Method: y is clamped to −126 (2^−126 = FLT_MIN: a weight 1e-38 of the largest, where the true one
// is smaller still: a softmax over float logits cannot tell them apart), k = round(y) from the
// 1.5·2^23 shifter (t = y + shifter holds k in its low mantissa bits; t's bits shifted left by 23 are
// k in the exponent field, plus the bits of 1.0f give 2^k exactly), f = y − k in [−1/2, 1/2] exactly,
// 2^f = 1 + f·q(f) with q of degree 5 fitted (Lawson iterations on 2000 Chebyshev nodes) to the relative
// error of 2^f: 2e-9 in exact arithmetic, about 1 ulp of float once evaluated in float (Horner, fma).
// Every lane is computed on its own, so results do not depend on how rows are cut into batches.
#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace sharp::transformer {

inline constexpr float kFloatExp2Lowest = -126.0f;
// q's coefficients, highest degree first (near ln2^(k+1)/(k+1)!).
inline constexpr float kFloatExp2Q[6] = {0x1.41fbbcp-13f, 0x1.5f3e54p-10f, 0x1.3b2d4cp-7f,
                                         0x1.c6aee8p-5f,  0x1.ebfbdcp-3f,  0x1.62e430p-1f};

template <class A>
inline xsimd::batch<float, A> exp2_nonpositive(const xsimd::batch<float, A>& y_in) {
  using B = xsimd::batch<float, A>;
  using I = xsimd::batch<std::int32_t, A>;
  const B shifter(0x1.8p23f);
  const B y = xsimd::max(y_in, B(kFloatExp2Lowest));
  const B t = y + shifter;
  const B f = y - (t - shifter);
  B q(kFloatExp2Q[0]);
  for (int i = 1; i < 6; ++i) q = xsimd::fma(q, f, B(kFloatExp2Q[i]));   // Horner; unrolled by the compiler
  const I scale_bits = (xsimd::bitwise_cast<I>(t) << 23) + I(0x3f800000);
  return xsimd::fma(f, q, B(1.0f)) * xsimd::bitwise_cast<B>(scale_bits);
}

// The same on one float (lane 0 of a broadcast batch: the same bits as the lanes).
inline float exp2_nonpositive(float y) { return exp2_nonpositive(xsimd::batch<float>(y)).get(0); }

}  // namespace sharp::transformer

#pragma once
// Fused multiply-adds on xsimd batches that are fused on every ISA: xsimd 8.1 has no AVX-512 fma
// (its generic x·y + z is fused only when the compiler contracts it), so 512-bit batches call the
// intrinsics. The per-ISA kernels (normalisers/simd/softmax_block.hpp) compile with -ffp-contract=off and
// must fuse exactly where they say so, in both widths, to give the same bits.
#include <type_traits>

#include <xsimd/xsimd.hpp>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace sharp::simd {

enum class Fused { kMulAdd, kMulSub, kNegMulAdd };  // x·y + z, x·y − z, z − x·y

template <Fused kOp, class T, class A>
inline xsimd::batch<T, A> fused(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y, const xsimd::batch<T, A>& z) {
#if defined(__AVX512F__)
  if constexpr (sizeof(typename xsimd::batch<T, A>::register_type) == 64) {
    if constexpr (std::is_same_v<T, double>) {
      if constexpr (kOp == Fused::kMulAdd)
        return _mm512_fmadd_pd(x, y, z);
      else if constexpr (kOp == Fused::kMulSub)
        return _mm512_fmsub_pd(x, y, z);
      else
        return _mm512_fnmadd_pd(x, y, z);
    } else {
      if constexpr (kOp == Fused::kMulAdd)
        return _mm512_fmadd_ps(x, y, z);
      else if constexpr (kOp == Fused::kMulSub)
        return _mm512_fmsub_ps(x, y, z);
      else
        return _mm512_fnmadd_ps(x, y, z);
    }
  } else
#endif
  {
    if constexpr (kOp == Fused::kMulAdd)
      return xsimd::fma(x, y, z);
    else if constexpr (kOp == Fused::kMulSub)
      return xsimd::fms(x, y, z);
    else
      return xsimd::fnma(x, y, z);
  }
}

template <class T, class A>
inline xsimd::batch<T, A> fused_mul_add(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y,
                                        const xsimd::batch<T, A>& z) {
  return fused<Fused::kMulAdd>(x, y, z);
}
template <class T, class A>
inline xsimd::batch<T, A> fused_mul_sub(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y,
                                        const xsimd::batch<T, A>& z) {
  return fused<Fused::kMulSub>(x, y, z);
}
template <class T, class A>
inline xsimd::batch<T, A> fused_neg_mul_add(const xsimd::batch<T, A>& x, const xsimd::batch<T, A>& y,
                                            const xsimd::batch<T, A>& z) {
  return fused<Fused::kNegMulAdd>(x, y, z);
}

}  // namespace sharp::simd

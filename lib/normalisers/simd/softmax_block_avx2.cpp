// The softmax family's block kernels for AVX2/FMA (x86-64-v3, the build's baseline): see
// normalisers/simd/softmax_block.hpp.
#include "normalisers/simd/softmax_block_impl.hpp"

SHARP_DEFINE_SOFTMAX_BLOCK(isa_avx2, xsimd::fma3<xsimd::avx2>)

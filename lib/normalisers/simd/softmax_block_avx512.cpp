// The softmax family's block kernels for AVX-512 (x86-64-v4): see normalisers/simd/softmax_block.hpp.
// CMakeLists.txt compiles this file alone with -march=x86-64-v4; it runs only where
// core/simd_isa.hpp found AVX-512.
#include "normalisers/simd/softmax_block_impl.hpp"

SHARP_DEFINE_SOFTMAX_BLOCK(isa_avx512, xsimd::avx512bw)

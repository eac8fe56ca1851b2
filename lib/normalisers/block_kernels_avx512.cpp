// The softmax family's block kernels for AVX-512 (x86-64-v4): see normalisers/block_kernels.hpp.
// CMakeLists.txt compiles this file alone with -march=x86-64-v4; it runs only where
// core/simd_isa.hpp found AVX-512.
#include "normalisers/block_lanes.hpp"

SHARP_DEFINE_BLOCK_KERNELS(isa_avx512, xsimd::avx512bw)

// The softmax family's block kernels for AVX2/FMA (x86-64-v3, the build's baseline): see
// normalisers/block_kernels.hpp.
#include "normalisers/block_lanes.hpp"

SHARP_DEFINE_BLOCK_KERNELS(isa_avx2, xsimd::fma3<xsimd::avx2>)

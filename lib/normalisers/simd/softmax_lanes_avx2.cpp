// The lane-group kernels (float and double) for AVX2/FMA (x86-64-v3, the build's baseline): see
// normalisers/simd/softmax_lanes_impl.hpp.
#include "normalisers/simd/softmax_lanes_impl.hpp"

SHARP_DEFINE_SOFTMAX_LANES(isa_avx2)

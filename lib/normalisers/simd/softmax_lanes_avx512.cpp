// The lane-group kernels (float and double) compiled for AVX-512 (x86-64-v4: 32 vector
// registers): see normalisers/simd/softmax_lanes_impl.hpp. CMakeLists.txt compiles this file alone with
// -march=x86-64-v4; it runs only where core/simd_isa.hpp found AVX-512.
#include "normalisers/simd/softmax_lanes_impl.hpp"

SHARP_DEFINE_SOFTMAX_LANES(isa_avx512)

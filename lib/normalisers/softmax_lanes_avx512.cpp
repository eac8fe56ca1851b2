// The lane-group kernels (float and double) compiled for AVX-512 (x86-64-v4: 32 vector
// registers): see normalisers/lane_group_kernels.hpp. CMakeLists.txt compiles this file alone with
// -march=x86-64-v4; it runs only where core/simd_isa.hpp found AVX-512.
#include "normalisers/lane_group_kernels.hpp"

SHARP_DEFINE_LANE_GROUP_KERNELS(isa_avx512)

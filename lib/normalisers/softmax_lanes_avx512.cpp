// The float lane-group kernel compiled for AVX-512 (x86-64-v4: 32 vector registers): see
// normalisers/float_lane_groups.hpp. CMakeLists.txt compiles this file alone with -march=x86-64-v4;
// it runs only where core/simd_isa.hpp found AVX-512.
#include "normalisers/float_lane_groups.hpp"

SHARP_DEFINE_FLOAT_LANE_GROUPS(isa_avx512)

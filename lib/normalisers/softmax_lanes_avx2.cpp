// The lane-group kernels (float and double) for AVX2/FMA (x86-64-v3, the build's baseline): see
// normalisers/lane_group_kernels.hpp.
#include "normalisers/lane_group_kernels.hpp"

SHARP_DEFINE_LANE_GROUP_KERNELS(isa_avx2)

// The float lane-group kernel for AVX2/FMA (x86-64-v3, the build's baseline): see
// normalisers/float_lane_groups.hpp.
#include "normalisers/float_lane_groups.hpp"

SHARP_DEFINE_FLOAT_LANE_GROUPS(isa_avx2)

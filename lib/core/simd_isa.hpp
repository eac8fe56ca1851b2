#pragma once
// Which instruction set the dispatched hot kernels run (normalisers/simd/softmax_block.hpp): AVX-512 when
// the CPU has it (the x86-64-v4 set: F, DQ, BW, VL), else AVX2/FMA, the build's baseline (x86-64-v3).
// SHARP_SIMD=avx2|avx512|auto forces one (for tests and benchmarks); both give the same bits
// (docs/architecture.md#determinism). Chosen once, on first use.
#include <string>

namespace sharp {

enum class SimdIsa { Avx2, Avx512 };

bool cpu_has_avx512();

// The ISA for the value of SHARP_SIMD (null or empty: auto). Throws sharp::BadInput for a value
// other than avx2, avx512 or auto, and for avx512 on a CPU without it.
SimdIsa choose_simd_isa(const char* setting);

// choose_simd_isa(getenv("SHARP_SIMD")), once per process (later calls return the first answer).
SimdIsa active_simd_isa();

std::string simd_isa_name(SimdIsa isa);  // "avx2", "avx512"

}  // namespace sharp

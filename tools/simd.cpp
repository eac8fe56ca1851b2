// sharp-simd: which instruction set the hot kernels use on this node (core/simd_isa.hpp): AVX-512
// where the CPU has it, else AVX2; SHARP_SIMD=avx2|avx512|auto forces one. Both give the same bits
// (docs/architecture.md#determinism). Exit 0, or 2 for a bad SHARP_SIMD.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/errors.hpp"
#include "core/simd_isa.hpp"

int main(int argc, char** argv) {
  if (argc > 1) {
    const bool help = std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0;
    std::fputs(
        "Usage: sharp-simd\nPrints the ISA the hot kernels dispatch to on this node (avx2 or avx512), whether\n"
        "the CPU has AVX-512, and SHARP_SIMD (avx2|avx512|auto; unset = auto). Same bits on both\n"
        "(docs/architecture.md#determinism).\n",
        help ? stdout : stderr);
    return help ? 0 : 2;
  }
  try {
    const char* setting = std::getenv("SHARP_SIMD");
    std::printf("%s (CPU has AVX-512: %s; SHARP_SIMD=%s)\n", sharp::simd_isa_name(sharp::active_simd_isa()).c_str(),
                sharp::cpu_has_avx512() ? "yes" : "no", setting && *setting ? setting : "auto");
    return 0;
  } catch (const sharp::BadInput& e) {
    std::fprintf(stderr, "sharp-simd: error: %s\n", e.what());
    return 2;
  }
}

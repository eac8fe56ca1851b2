#include "core/simd_isa.hpp"

#include <cstdlib>
#include <string>

#include "core/errors.hpp"

namespace sharp {

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}

SimdIsa choose_simd_isa(const char* setting) {
  const std::string s = setting ? setting : "";
  if (s.empty() || s == "auto") return cpu_has_avx512() ? SimdIsa::Avx512 : SimdIsa::Avx2;
  if (s == "avx2") return SimdIsa::Avx2;
  if (s == "avx512") {
    if (!cpu_has_avx512()) {
      throw BadInput("SHARP_SIMD=avx512, but this CPU lacks AVX-512 (F, DQ, BW, VL); use avx2 or auto");
    }
    return SimdIsa::Avx512;
  }
  throw BadInput("SHARP_SIMD='" + s + "': expected avx2, avx512 or auto");
}

SimdIsa active_simd_isa() {
  static const SimdIsa isa = choose_simd_isa(std::getenv("SHARP_SIMD"));
  return isa;
}

std::string simd_isa_name(SimdIsa isa) { return isa == SimdIsa::Avx512 ? "avx512" : "avx2"; }

}  // namespace sharp

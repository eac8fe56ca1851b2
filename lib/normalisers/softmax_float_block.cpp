#include "normalisers/softmax_float_block.hpp"

#include <cmath>
#include <limits>

#include <xsimd/xsimd.hpp>

#include "core/simd_exp.hpp"
#include "core/simd_exp_float.hpp"
#include "normalisers/float_widen.hpp"

namespace sharp::norm::detail {

template <bool kStore, bool kWeighted>
FloatBlockSums float_block_pass(const float* z, float* p, std::size_t len, double beta, double shift) {
  using BF = xsimd::batch<float>;
  using BD = xsimd::batch<double>;
  constexpr std::size_t L = BF::size;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  FloatBlockSums out;
  const double scale = beta * sharp::simd::kLog2e;
  const double cd = shift * scale;
  const double c = std::nearbyint(8.0 * cd) / 8.0;
  if (!(scale > 0.0) || !(std::fabs(c) < 0x1p18)) return out;
  out.applicable = true;
  out.residual = (cd - c) + std::fma(shift, scale, -cd);   // shift·scale − c (cd − c is exact)
  const float s_hi = static_cast<float>(scale);
  const float s_lo = static_cast<float>(scale - static_cast<double>(s_hi));
  const float cf = static_cast<float>(c);                                    // exact: a multiple of 1/8 below 2^18
  const BF shi(s_hi), slo(s_lo);
  const BF sc(sharp::simd::detail::kShifterF - cf);                          // exact
  const BF t_low(sharp::simd::detail::kShifterF + sharp::simd::kExp2ZeroF);  // k = −127: exactly 0
  const BF z_low(static_cast<float>((c - 200.0) / scale));                   // y ≈ −200, below t_low's
  const BD scale_d(scale), minus_c(-c);
  BF mx(-kInf);
  BD s_lo_acc(0.0), s_hi_acc(0.0), t_lo_acc(0.0), t_hi_acc(0.0);
  // 2^(y + d) of one batch. max(z_low, x) and max(t_low, ·) keep NaN (x86 returns the second
  // operand), so a NaN logit makes the sums NaN; +inf gives inf·s − inf = NaN in f.
  auto term = [&](BF x) {
    mx = xsimd::max(mx, x);
    const BF zc = xsimd::max(z_low, x);
    const BF t = xsimd::max(t_low, xsimd::fma(zc, shi, sc));
    const BF m = t - sc;
    const BF f = xsimd::fma(zc, slo, xsimd::fms(zc, shi, m));
    const BF e = sharp::simd::detail::exp2_from_reduced(t, f);
    if constexpr (kWeighted) {   // y = z·scale − c in double, e widened: both sums per term in double
      BD e0, e1, z0, z1;
      widen(e, e0, e1);
      widen(zc, z0, z1);
      s_lo_acc += e0;
      s_hi_acc += e1;
      t_lo_acc = xsimd::fma(xsimd::fma(z0, scale_d, minus_c), e0, t_lo_acc);
      t_hi_acc = xsimd::fma(xsimd::fma(z1, scale_d, minus_c), e1, t_hi_acc);
    }
    return e;
  };
  auto add_pair = [&](BF e) {   // only the sum: a pair's float sum, then double
    if constexpr (!kWeighted) {
      BD e0, e1;
      widen(e, e0, e1);
      s_lo_acc += e0;
      s_hi_acc += e1;
    }
  };
  std::size_t i = 0;
  for (; i + 2 * L <= len; i += 2 * L) {
    __builtin_prefetch(z + i + 512);
    const BF e0 = term(BF::load_unaligned(z + i));
    const BF e1 = term(BF::load_unaligned(z + i + L));
    add_pair(e0 + e1);
    if constexpr (kStore) {
      e0.store_unaligned(p + i);
      e1.store_unaligned(p + i + L);
    }
  }
  if (i < len) {   // one batch or less left: padding lanes are −inf, weight exactly 0
    alignas(64) float lane[L];
    const std::size_t rest = len - i;
    const std::size_t count = rest < L ? rest : L;
    for (std::size_t l = 0; l < L; ++l) lane[l] = l < count ? z[i + l] : -kInf;
    BF e = term(BF::load_aligned(lane));
    if (rest > L) {   // a second, partial batch
      for (std::size_t l = 0; l < L; ++l) lane[l] = L + l < rest ? z[i + L + l] : -kInf;
      const BF e1 = term(BF::load_aligned(lane));
      add_pair(e + e1);
      if constexpr (kStore) {
        e1.store_aligned(lane);
        for (std::size_t l = 0; L + l < rest; ++l) p[i + L + l] = lane[l];
      }
    } else {
      add_pair(e);
    }
    if constexpr (kStore) {
      e.store_aligned(lane);
      for (std::size_t l = 0; l < count; ++l) p[i + l] = lane[l];
    }
  }
  alignas(64) float m_lanes[L];
  mx.store_aligned(m_lanes);
  double m = m_lanes[0];
  for (std::size_t l = 1; l < L; ++l) m = m > m_lanes[l] ? m : m_lanes[l];
  out.max = m;
  out.sum = xsimd::hadd(s_lo_acc + s_hi_acc);
  out.weighted = kWeighted ? xsimd::hadd(t_lo_acc + t_hi_acc) : 0.0;
  return out;
}

template FloatBlockSums float_block_pass<true, true>(const float*, float*, std::size_t, double, double);
template FloatBlockSums float_block_pass<true, false>(const float*, float*, std::size_t, double, double);
template FloatBlockSums float_block_pass<false, true>(const float*, float*, std::size_t, double, double);
template FloatBlockSums float_block_pass<false, false>(const float*, float*, std::size_t, double, double);

}  // namespace sharp::norm::detail

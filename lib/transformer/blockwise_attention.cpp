#include "transformer/blockwise_attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "core/errors.hpp"
#include "core/online_softmax.hpp"
#include "core/simd_exp.hpp"
#include "nn/gemm.hpp"
#include "transformer/parallel_items.hpp"

namespace sharp::transformer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.693147180559945309417;

[[noreturn]] void throw_not_finite(std::size_t row, std::size_t j0, std::size_t valid) {
  throw NumericError("attention: a logit of row " + std::to_string(row) + " in keys " + std::to_string(j0) + "..." +
                     std::to_string(j0 + valid - 1) + " is not finite");
}

// Running statistics of one query row: the library's online softmax at scale β (reference = the
// running max), and the smallest logit. For an observer, the logits' own statistics at β = 1
// (`plain`, summed only where β ≠ 1 without an entropy pass; with one, that pass's entropy).
struct RowState {
  OnlineSoftmax<> stats, plain;
  double zmin = kInf, beta = 1.0, entropy_before_beta = 0.0;
};

// Float models: the logits z[0..count) of one row's block in float lanes: their max, min and whether
// all are finite (z − z is 0 for finite z, NaN for ±inf and NaN, and a NaN stays in the sum).
struct FloatScan {
  float max, min;
  bool finite;
};
FloatScan scan_float(const float* z, std::size_t count) {
  using B = xsimd::batch<float>;
  constexpr std::size_t L = B::size;
  constexpr float kInfF = std::numeric_limits<float>::infinity();
  B vmax(-kInfF), vmin(kInfF), check(0.0f);
  std::size_t j = 0;
  for (; j + L <= count; j += L) {
    const B v = B::load_unaligned(z + j);
    vmax = xsimd::max(vmax, v);
    vmin = xsimd::min(vmin, v);
    check += v - v;
  }
  alignas(64) float hi[L], lo[L];
  vmax.store_aligned(hi);
  vmin.store_aligned(lo);
  FloatScan out{-kInfF, kInfF, true};
  float c = xsimd::hadd(check);
  for (std::size_t l = 0; l < L; ++l) {
    out.max = std::max(out.max, hi[l]);
    out.min = std::min(out.min, lo[l]);
  }
  for (; j < count; ++j) {
    out.max = std::max(out.max, z[j]);
    out.min = std::min(out.min, z[j]);
    c += z[j] - z[j];
  }
  out.finite = c == 0.0f;
  return out;
}

// Float models' weights 2^y, y = β·log2(e)·(z − m) ≤ 0: the library's float exp2 (core/simd_exp.hpp),
// 0 below 2^−126 of the row's largest weight.
struct Exp2Weights {
  template <class A>
  xsimd::batch<float, A> operator()(const xsimd::batch<float, A>& y) const {
    return simd::exp2_bounded(y);
  }
  float operator()(float y) const { return simd::exp2f_bounded(y); }
};

// Sums over z[0..count) of the weights w = exp(u) and of u·w, u = c·(z − m), in SIMD lanes of T then
// one horizontal add (the same bits for any thread count); with store, z[j] is replaced by w_j.
// Double models: exp = e^u (core/simd_exp.hpp), c = β. Float models: exp = 2^u (Exp2Weights, twice
// the lanes), c = β·log2(e), so the caller multiplies Σ u·w by ln 2; the block's float sums (at most
// kKeyBlock terms, as many as the P·V product sums in float) join the row's statistics in double.
template <class T, class Exp>
void block_sums(T* z, std::size_t count, T c, T m, bool store, Exp exp, double& s_out, double& t_out) {
  using B = xsimd::batch<T>;
  constexpr std::size_t L = B::size;
  B s(T(0)), t(T(0));
  const B vc(c), vm(m);
  std::size_t j = 0;
  for (; j + L <= count; j += L) {
    const B u = (B::load_unaligned(z + j) - vm) * vc;
    const B w = exp(u);
    s += w;
    t = xsimd::fma(u, w, t);
    if (store) w.store_unaligned(z + j);
  }
  T ss = xsimd::hadd(s), tt = xsimd::hadd(t);
  for (; j < count; ++j) {
    const T u = (z[j] - m) * c;
    const T w = exp(u);
    ss += w;
    tt = std::fma(u, w, tt);
    if (store) z[j] = w;
  }
  s_out = double(ss);
  t_out = double(tt);
}

}  // namespace

bool blockwise_supported(const norm::Normaliser& normaliser) { return normaliser.temperature() != nullptr; }

template <class T>
void attention_forward_blockwise(T* out, const T* qkv, const AttentionShape& shape, const AttentionHeads& heads,
                                 AttentionObserver* observer) {
  for (const norm::Normaliser* n : heads.normalisers)
    if (!blockwise_supported(*n))
      throw BadInput("blockwise attention takes heads of the softmax family (with a temperature), not '" + n->name() +
                     "'");
  const std::size_t B = shape.batch, n = shape.length, H = shape.heads, dh = shape.d_head, W = shape.width();
  const std::size_t ld = 3 * W;
  const std::size_t tiles = (n + kTileRows - 1) / kTileRows;
  const T scale = T(1.0 / std::sqrt(double(dh)));
  struct Scratch {
    std::vector<T> S, P, acc;
    std::vector<double> z;
    std::vector<RowState> rows;
    std::vector<AttentionRowStats> stats;
  };
  std::vector<Scratch> scratch(static_cast<std::size_t>(omp_get_max_threads()));
  const std::size_t work = B * n * (shape.causal ? n / 2 + 1 : n) * 4 * W;
  parallel_items(B * H * tiles, work, [&](std::size_t item, std::size_t thread) {
    const std::size_t b = item / (H * tiles), h = (item / tiles) % H, tile = item % tiles;
    const std::size_t r0 = tile * kTileRows, rows = std::min(kTileRows, n - r0);
    const std::size_t kend = shape.causal ? r0 + rows : n;
    Scratch& sc = scratch[thread];
    sc.S.resize(kTileRows * kKeyBlock);
    if (!std::is_same_v<T, float>) sc.P.resize(kTileRows * kKeyBlock);
    sc.acc.assign(rows * dh, T(0));
    sc.z.resize(kKeyBlock);
    sc.rows.assign(rows, RowState{});
    const T* q = qkv + (b * n + r0) * ld + h * dh;
    const T* k = qkv + b * n * ld + W + h * dh;
    const T* v = qkv + b * n * ld + 2 * W + h * dh;
    const norm::Temperature& temperature = *heads.normalisers[h]->temperature();
    const double slope = heads.alibi.empty() ? 0.0 : heads.alibi[h];
    for (std::size_t r = 0; r < rows; ++r) sc.rows[r].beta = temperature.beta(shape.keys(r0 + r));

    // One pass over the key blocks. accumulate = false: statistics only (the entropy pass at β = 1).
    auto pass = [&](bool accumulate) {
      for (std::size_t j0 = 0; j0 < kend; j0 += kKeyBlock) {
        const std::size_t jn = std::min(kKeyBlock, kend - j0);
        T* S = sc.S.data();
        T* P = std::is_same_v<T, float> ? S : sc.P.data();
        nn::gemm(nn::Trans::No, nn::Trans::Yes, rows, jn, dh, scale, q, ld, k + j0 * ld, ld, T(0), S, jn);
        for (std::size_t r = 0; r < rows; ++r) {
          const std::size_t i = r0 + r, keys = shape.keys(i);
          const std::size_t valid = keys > j0 ? std::min(jn, keys - j0) : 0;
          T* prow = P + r * jn;
          if (valid == 0) {
            if (accumulate) std::fill(prow, prow + jn, T(0));
            continue;
          }
          // The row's logits of this block (ALiBi bias rounded to T and subtracted in T, as
          // attention_forward), their max and min: in place in float lanes for float models, copied
          // to double for double models.
          T* srow = S + r * jn;
          double* z = sc.z.data();
          double bmax = -kInf, bmin = kInf;
          if (slope != 0.0)
            for (std::size_t j = 0; j < valid; ++j) {
              const std::size_t kj = j0 + j;
              srow[j] = T(srow[j] - T(slope * double(i > kj ? i - kj : kj - i)));
            }
          if constexpr (std::is_same_v<T, float>) {
            const FloatScan scan = scan_float(srow, valid);
            if (!scan.finite) throw_not_finite(i, j0, valid);
            bmax = double(scan.max);
            bmin = double(scan.min);
          } else {
            bool nan = false;  // an integer reduction, so the loop vectorises (±inf shows in bmax, bmin)
            for (std::size_t j = 0; j < valid; ++j) {
              const double zj = double(srow[j]);
              z[j] = zj;
              nan |= zj != zj;
              bmax = zj > bmax ? zj : bmax;
              bmin = zj < bmin ? zj : bmin;
            }
            if (nan || !std::isfinite(bmax) || !std::isfinite(bmin)) throw_not_finite(i, j0, valid);
          }
          RowState& st = sc.rows[r];
          st.zmin = std::min(st.zmin, bmin);
          if (observer && accumulate && !temperature.needs_entropy_pass() &&
              st.beta != 1.0) {  // before the store below
            if (bmax > st.plain.shift) st.plain.rescale_to(bmax);
            double s1, t1;
            if constexpr (std::is_same_v<T, float>) {
              block_sums(srow, valid, float(simd::kLog2e), float(st.plain.shift), false, Exp2Weights{}, s1, t1);
              t1 *= kLn2;
            } else {
              block_sums(
                  z, valid, 1.0, st.plain.shift, false, [](auto u) { return simd::exp_bounded(u); }, s1, t1);
            }
            st.plain.add_sums(s1, t1);
          }
          if (bmax > st.stats.shift) {  // the reference follows the max; the output sum follows too
            const double f = st.stats.rescale_to(bmax, st.beta);
            if (accumulate && f != 1.0)
              for (std::size_t c = 0; c < dh; ++c) sc.acc[r * dh + c] = T(double(sc.acc[r * dh + c]) * f);
          }
          st.stats.max = st.stats.shift;
          double s, t;
          if constexpr (std::is_same_v<T, float>) {  // weights written over the logits (P == S)
            block_sums(srow, valid, float(st.beta * simd::kLog2e), float(st.stats.shift), accumulate, Exp2Weights{}, s,
                       t);
            t *= kLn2;
          } else {
            block_sums(
                z, valid, st.beta, st.stats.shift, accumulate, [](auto u) { return simd::exp_bounded(u); }, s, t);
            if (accumulate)
              for (std::size_t j = 0; j < valid; ++j) prow[j] = T(z[j]);
          }
          st.stats.add_sums(s, t);
          if (accumulate) std::fill(prow + valid, prow + jn, T(0));
        }
        if (accumulate)
          nn::gemm(nn::Trans::No, nn::Trans::No, rows, dh, jn, T(1), P, jn, v + j0 * ld, ld, T(1), sc.acc.data(), dh);
      }
    };

    if (temperature.needs_entropy_pass()) {
      pass(false);
      for (RowState& st : sc.rows) {
        st.entropy_before_beta = st.stats.entropy();  // the first pass is at β = 1
        st.beta = temperature.beta_after(st.entropy_before_beta);
        // The second pass starts from the final max (no rescaling) with fresh sums.
        const double max = st.stats.max;
        st.stats = OnlineSoftmax<>{};
        st.stats.rescale_to(max);
        st.stats.max = max;
      }
    }
    pass(true);

    T* o = out + (b * n + r0) * W + h * dh;
    for (std::size_t r = 0; r < rows; ++r) {
      const double inv = 1.0 / sc.rows[r].stats.total_sum();
      for (std::size_t c = 0; c < dh; ++c) o[r * W + c] = T(double(sc.acc[r * dh + c]) * inv);
    }
    if (observer) {
      sc.stats.resize(rows);
      for (std::size_t r = 0; r < rows; ++r) {
        const RowState& st = sc.rows[r];
        AttentionRowStats& s = sc.stats[r];
        s.keys = std::uint32_t(shape.keys(r0 + r));
        s.logit_max = st.stats.max;
        s.logit_min = st.zmin;
        s.alpha_max = 1.0 / st.stats.total_sum();  // the max's term is e^0 = 1
        s.alpha_min = simd::exp_bounded(st.beta * (st.zmin - st.stats.max)) / st.stats.total_sum();
        s.entropy = st.stats.entropy();
        s.entropy_before_beta = temperature.needs_entropy_pass() ? st.entropy_before_beta
                                : st.beta == 1.0                 ? s.entropy
                                                                 : st.plain.entropy();
        s.beta = st.beta;
        s.support = s.keys;
      }
      observer->observe(AttentionTile<T>{b, heads.layer, h, r0, rows, sc.stats.data()});
    }
  });
}

template void attention_forward_blockwise<float>(float*, const float*, const AttentionShape&, const AttentionHeads&,
                                                 AttentionObserver*);
template void attention_forward_blockwise<double>(double*, const double*, const AttentionShape&, const AttentionHeads&,
                                                  AttentionObserver*);

}  // namespace sharp::transformer

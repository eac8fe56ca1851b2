#include "transformer/blockwise_attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "core/errors.hpp"
#include "core/online_softmax.hpp"
#include "core/simd_exp.hpp"
#include "nn/gemm.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "transformer/parallel_items.hpp"

namespace sharp::transformer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Kind { Softmax, Ssmax, Adaptive };

Kind kind_of(const norm::Normaliser& n) {
  const std::string& name = n.spec().name;
  if (name == "softmax") return Kind::Softmax;
  if (name == "ssmax") return Kind::Ssmax;
  return Kind::Adaptive;
}

// Running statistics of one query row: the library's online softmax at scale β (reference = the
// running max), and the smallest logit.
struct RowState {
  OnlineSoftmax<> stats;
  double zmin = kInf, beta = 1.0;
};

// Sums over z[0..count) of w = e^{β(z − m)} and β(z − m)·w, in SIMD lanes then one horizontal add
// (the same bits for any thread count). With store, z[j] is replaced by w_j.
void block_sums(double* z, std::size_t count, double beta, double m, bool store, double& s_out, double& t_out) {
  using B = xsimd::batch<double>;
  constexpr std::size_t L = B::size;
  B s(0.0), t(0.0);
  const B vb(beta), vm(m);
  std::size_t j = 0;
  for (; j + L <= count; j += L) {
    const B u = vb * (B::load_unaligned(z + j) - vm);
    const B w = simd::exp_bounded(u);
    s += w;
    t = xsimd::fma(u, w, t);
    if (store) w.store_unaligned(z + j);
  }
  double ss = xsimd::hadd(s), tt = xsimd::hadd(t);
  for (; j < count; ++j) {
    const double u = beta * (z[j] - m);
    const double w = simd::exp_bounded(u);
    ss += w;
    tt = std::fma(u, w, tt);
    if (store) z[j] = w;
  }
  s_out = ss;
  t_out = tt;
}

}  // namespace

bool blockwise_supported(const norm::Normaliser& normaliser) {
  const std::string& name = normaliser.spec().name;
  return name == "softmax" || name == "ssmax" || name == "adaptive";
}

template <class T>
void attention_forward_blockwise(T* out, const T* qkv, const AttentionShape& shape, const AttentionHeads& heads,
                                 AttentionObserver* observer) {
  for (const norm::Normaliser* n : heads.normalisers)
    if (!blockwise_supported(*n))
      throw BadInput("blockwise attention takes softmax, ssmax or adaptive heads, not '" + n->name() + "'");
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
    sc.P.resize(kTileRows * kKeyBlock);
    sc.acc.assign(rows * dh, T(0));
    sc.z.resize(kKeyBlock);
    sc.rows.assign(rows, RowState{});
    const T* q = qkv + (b * n + r0) * ld + h * dh;
    const T* k = qkv + b * n * ld + W + h * dh;
    const T* v = qkv + b * n * ld + 2 * W + h * dh;
    const norm::Normaliser& normaliser = *heads.normalisers[h];
    const Kind kind = kind_of(normaliser);
    const double slope = heads.alibi.empty() ? 0.0 : heads.alibi[h];
    for (std::size_t r = 0; r < rows; ++r) {
      const double keys = double(shape.keys(r0 + r));
      sc.rows[r].beta = kind == Kind::Softmax ? normaliser.spec().param("beta")
                        : kind == Kind::Ssmax ? normaliser.spec().param("s") * std::log(keys)
                                              : 1.0;
    }

    // One pass over the key blocks. accumulate = false: statistics only (adaptive's first pass).
    auto pass = [&](bool accumulate) {
      for (std::size_t j0 = 0; j0 < kend; j0 += kKeyBlock) {
        const std::size_t jn = std::min(kKeyBlock, kend - j0);
        T* S = sc.S.data();
        T* P = sc.P.data();
        nn::gemm(nn::Trans::No, nn::Trans::Yes, rows, jn, dh, scale, q, ld, k + j0 * ld, ld, T(0), S, jn);
        for (std::size_t r = 0; r < rows; ++r) {
          const std::size_t i = r0 + r, keys = shape.keys(i);
          const std::size_t valid = keys > j0 ? std::min(jn, keys - j0) : 0;
          T* prow = P + r * jn;
          if (valid == 0) {
            if (accumulate) std::fill(prow, prow + jn, T(0));
            continue;
          }
          double* z = sc.z.data();
          double bmax = -kInf, bmin = kInf;
          bool nan = false;   // an integer reduction, so the loops vectorise (±inf shows in bmax, bmin)
          const T* srow = S + r * jn;
          if (slope == 0.0) {
            for (std::size_t j = 0; j < valid; ++j) {
              const double zj = double(srow[j]);
              z[j] = zj;
              nan |= zj != zj;
              bmax = zj > bmax ? zj : bmax;
              bmin = zj < bmin ? zj : bmin;
            }
          } else {
            for (std::size_t j = 0; j < valid; ++j) {
              const std::size_t kj = j0 + j;
              // As attention_forward: the bias is rounded to T and subtracted in T.
              const double zj = double(T(srow[j] - T(slope * double(i > kj ? i - kj : kj - i))));
              z[j] = zj;
              nan |= zj != zj;
              bmax = zj > bmax ? zj : bmax;
              bmin = zj < bmin ? zj : bmin;
            }
          }
          if (nan || !std::isfinite(bmax) || !std::isfinite(bmin))
            throw NumericError("attention: a logit of row " + std::to_string(i) + " in keys " + std::to_string(j0) +
                               "..." + std::to_string(j0 + valid - 1) + " is not finite");
          RowState& st = sc.rows[r];
          st.zmin = std::min(st.zmin, bmin);
          if (bmax > st.stats.shift) {   // the reference follows the max; the output sum follows too
            const double f = st.stats.rescale_to(bmax, st.beta);
            if (accumulate && f != 1.0)
              for (std::size_t c = 0; c < dh; ++c) sc.acc[r * dh + c] = T(double(sc.acc[r * dh + c]) * f);
          }
          st.stats.max = st.stats.shift;
          double s, t;
          block_sums(z, valid, st.beta, st.stats.shift, accumulate, s, t);
          st.stats.add_sums(s, t);
          if (accumulate) {
            for (std::size_t j = 0; j < valid; ++j) prow[j] = T(z[j]);
            std::fill(prow + valid, prow + jn, T(0));
          }
        }
        if (accumulate)
          nn::gemm(nn::Trans::No, nn::Trans::No, rows, dh, jn, T(1), P, jn, v + j0 * ld, ld, T(1), sc.acc.data(), dh);
      }
    };

    if (kind == Kind::Adaptive) {
      pass(false);
      for (RowState& st : sc.rows) {
        st.beta = norm::adaptive_beta(st.stats.entropy());
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
        s.alpha_max = 1.0 / st.stats.total_sum();   // the max's term is e^0 = 1
        s.alpha_min = simd::exp_bounded(st.beta * (st.zmin - st.stats.max)) / st.stats.total_sum();
        s.entropy = st.stats.entropy();
        s.beta = st.beta;
        s.support = s.keys;
      }
      observer->observe(AttentionTile<T>{b, heads.layer, h, r0, rows, sc.stats.data()});
    }
  });
}

template void attention_forward_blockwise<float>(float*, const float*, const AttentionShape&, const AttentionHeads&,
                                                 AttentionObserver*);
template void attention_forward_blockwise<double>(double*, const double*, const AttentionShape&,
                                                  const AttentionHeads&, AttentionObserver*);

}  // namespace sharp::transformer

#include "transformer/attention.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/online_softmax.hpp"
#include "nn/gemm.hpp"
#include "transformer/parallel_items.hpp"

namespace sharp::transformer {

template <class T>
AttentionRowStats attention_row_stats(const T* z, const T* p, std::size_t k, const norm::Normaliser& normaliser) {
  AttentionRowStats s;
  s.keys = std::uint32_t(k);
  double zmax = -std::numeric_limits<double>::infinity(), zmin = std::numeric_limits<double>::infinity();
  double pmax = -1.0, pmin = 2.0, h = 0.0;
  std::uint32_t support = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const double zj = double(z[j]), pj = double(p[j]);
    zmax = std::max(zmax, zj);
    zmin = std::min(zmin, zj);
    pmax = std::max(pmax, pj);
    pmin = std::min(pmin, pj);
    if (pj > 0.0) {
      ++support;
      h -= pj * std::log(pj);
    }
  }
  s.logit_max = zmax;
  s.logit_min = zmin;
  s.alpha_max = pmax;
  s.alpha_min = pmin;
  s.entropy = h;
  s.support = support;
  OnlineSoftmax<> logits;  // reference at the max: no rescaling, every term <= 1
  logits.rescale_to(zmax);
  for (std::size_t j = 0; j < k; ++j) logits.add(double(z[j]));
  s.entropy_before_beta = logits.entropy();
  const norm::Temperature* temperature = normaliser.temperature();
  s.beta = temperature ? norm::row_beta(*temperature, z, k) : std::numeric_limits<double>::quiet_NaN();
  return s;
}

std::size_t attention_cache_tile_offset(const AttentionShape& shape, std::size_t tile) {
  // Tiles before `tile` are full: causal tile u holds kTileRows·kTileRows·(u + 1) entries.
  const std::size_t r0 = tile * kTileRows;
  return shape.causal ? kTileRows * kTileRows * tile * (tile + 1) / 2 : r0 * shape.length;
}

std::size_t attention_cache_head_size(const AttentionShape& shape) {
  const std::size_t n = shape.length, tiles = (n + kTileRows - 1) / kTileRows;
  if (!shape.causal) return n * n;
  const std::size_t last = tiles - 1, rows = n - last * kTileRows;
  return attention_cache_tile_offset(shape, last) + rows * n;
}

template <class T>
void attention_forward(T* out, const T* qkv, const AttentionShape& shape, const AttentionHeads& heads,
                       std::type_identity_t<AttentionCache<T>>* cache, AttentionObserver* observer) {
  const std::size_t B = shape.batch, n = shape.length, H = shape.heads, dh = shape.d_head, W = shape.width();
  const std::size_t ld = 3 * W;
  const std::size_t tiles = (n + kTileRows - 1) / kTileRows;
  const std::size_t head_size = attention_cache_head_size(shape);
  const T scale = T(1.0 / std::sqrt(double(dh)));
  if (cache) {  // every entry is written by its tile
    cache->logits.resize(B * H * head_size);
    cache->probs.resize(B * H * head_size);
  }
  const bool want_p = observer && observer->wants_probabilities();
  struct Scratch {
    std::vector<T> logits, probs;
    std::vector<AttentionRowStats> stats;
  };
  std::vector<Scratch> scratch(static_cast<std::size_t>(omp_get_max_threads()));
  const std::size_t np = heads.row_parameters ? heads.normalisers[0]->parameter_names().size() : 0;
  parallel_items(
      B * H * tiles, B * n * (shape.causal ? n / 2 + 1 : n) * 4 * W, [&](std::size_t item, std::size_t thread) {
        const std::size_t b = item / (H * tiles), h = (item / tiles) % H, tile = item % tiles;
        const std::size_t r0 = tile * kTileRows, rows = std::min(kTileRows, n - r0);
        const std::size_t kend = shape.causal ? r0 + rows : n;  // keys any row of the tile sees
        Scratch& s = scratch[thread];
        T *S, *P;
        if (cache) {
          const std::size_t offset = (b * H + h) * head_size + attention_cache_tile_offset(shape, tile);
          S = cache->logits.data() + offset;
          P = cache->probs.data() + offset;
        } else {
          s.logits.resize(kTileRows * n);
          s.probs.resize(kTileRows * n);
          S = s.logits.data();
          P = s.probs.data();
        }
        const T* q = qkv + (b * n + r0) * ld + h * dh;
        const T* k = qkv + b * n * ld + W + h * dh;
        const T* v = qkv + b * n * ld + 2 * W + h * dh;
        nn::gemm(nn::Trans::No, nn::Trans::Yes, rows, kend, dh, scale, q, ld, k, ld, T(0), S, kend);
        if (!heads.alibi.empty()) {
          const double slope = heads.alibi[h];
          for (std::size_t r = 0; r < rows; ++r) {
            const std::size_t i = r0 + r;
            for (std::size_t j = 0; j < shape.keys(i); ++j) S[r * kend + j] -= T(slope * double(i > j ? i - j : j - i));
          }
        }
        if (shape.causal)
          for (std::size_t r = 0; r < rows; ++r)
            std::fill(S + r * kend + r0 + r + 1, S + (r + 1) * kend, -std::numeric_limits<T>::infinity());
        const norm::Normaliser& normaliser = *heads.normalisers[h];
        if (heads.row_parameters)
          normaliser.forward(S, P, rows, kend, heads.row_parameters + ((b * H + h) * n + r0) * np);
        else
          normaliser.forward(S, P, rows, kend);
        nn::gemm(nn::Trans::No, nn::Trans::No, rows, dh, kend, T(1), P, kend, v, ld, T(0),
                 out + (b * n + r0) * W + h * dh, W);
        if (observer) {
          s.stats.resize(rows);
          for (std::size_t r = 0; r < rows; ++r)
            s.stats[r] = attention_row_stats(S + r * kend, P + r * kend, shape.keys(r0 + r), normaliser);
          observer->observe(
              AttentionTile<T>{b, heads.layer, h, r0, rows, s.stats.data(), want_p ? P : nullptr, want_p ? kend : 0});
        }
      });
}

template <class T>
void attention_backward(T* dqkv, const T* dout, const T* qkv, const AttentionShape& shape, const AttentionHeads& heads,
                        const AttentionCache<T>& cache, double* dparams) {
  const std::size_t B = shape.batch, n = shape.length, H = shape.heads, dh = shape.d_head, W = shape.width();
  const std::size_t ld = 3 * W;
  const std::size_t head_size = attention_cache_head_size(shape);
  const T scale = T(1.0 / std::sqrt(double(dh)));
  // Query tiles of a causal head see keys [0, r0 + rows) only: half the work of whole rows. dK and dV
  // accumulate over the tiles in tile order; an encoder head is one tile of n rows (its forward tiles
  // lie one after another, the head's [n, n] block).
  const std::size_t tile_rows = shape.causal ? kTileRows : n;
  thread_local std::vector<T> dP, dS;  // kept between calls: every entry used is written first
  if (dP.size() < tile_rows * n) {
    dP.resize(tile_rows * n);
    dS.resize(tile_rows * n);
  }
  std::vector<double> row_params;
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t h = 0; h < H; ++h) {
      const norm::Normaliser& normaliser = *heads.normalisers[h];
      const std::size_t np = normaliser.parameter_names().size();
      const T* q = qkv + b * n * ld + h * dh;
      const T* k = q + W;
      const T* v = q + 2 * W;
      const T* dO = dout + b * n * W + h * dh;
      T* dq = dqkv + b * n * ld + h * dh;
      T* dk = dq + W;
      T* dv = dq + 2 * W;
      for (std::size_t j = 0; j < n; ++j) {
        std::fill(dk + j * ld, dk + j * ld + dh, T(0));
        std::fill(dv + j * ld, dv + j * ld + dh, T(0));
      }
      row_params.assign(tile_rows * np, 0.0);
      double* gp = dparams && np ? row_params.data() : nullptr;
      for (std::size_t r0 = 0; r0 < n; r0 += tile_rows) {
        const std::size_t rows = std::min(tile_rows, n - r0), kend = shape.causal ? r0 + rows : n;
        const std::size_t offset = (b * H + h) * head_size + attention_cache_tile_offset(shape, r0 / kTileRows);
        const T* St = cache.logits.data() + offset;  // [rows, kend], masked entries −inf
        const T* Pt = cache.probs.data() + offset;  // masked entries 0
        // dP = dO Vᵀ [rows, kend]
        nn::gemm(nn::Trans::No, nn::Trans::Yes, rows, kend, dh, T(1), dO + r0 * W, W, v, ld, T(0), dP.data(), kend);
        if (heads.row_parameters) {  // each row's dL/dθ in its own slot
          const std::size_t row = (b * H + h) * n + r0;
          normaliser.backward(St, Pt, dP.data(), dS.data(), dparams ? dparams + row * np : nullptr, rows, kend,
                              heads.row_parameters + row * np);
        } else {
          normaliser.backward(St, Pt, dP.data(), dS.data(), gp, rows, kend);  // 0 at masked entries
        }
        if (gp && !heads.row_parameters)
          for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t j = 0; j < np; ++j) dparams[h * np + j] += gp[r * np + j];
        nn::gemm(nn::Trans::Yes, nn::Trans::No, kend, dh, rows, T(1), Pt, kend, dO + r0 * W, W, T(1), dv,
                 ld);  // dV += Pᵀ dO
        nn::gemm(nn::Trans::No, nn::Trans::No, rows, dh, kend, scale, dS.data(), kend, k, ld, T(0), dq + r0 * ld,
                 ld);  // dQ = dS K/√d
        nn::gemm(nn::Trans::Yes, nn::Trans::No, kend, dh, rows, scale, dS.data(), kend, q + r0 * ld, ld, T(1), dk,
                 ld);  // dK += dSᵀ Q/√d
      }
    }
  }
}

template AttentionRowStats attention_row_stats<float>(const float*, const float*, std::size_t, const norm::Normaliser&);
template AttentionRowStats attention_row_stats<double>(const double*, const double*, std::size_t,
                                                       const norm::Normaliser&);
template void attention_forward<float>(float*, const float*, const AttentionShape&, const AttentionHeads&,
                                       AttentionCache<float>*, AttentionObserver*);
template void attention_backward<float>(float*, const float*, const float*, const AttentionShape&,
                                        const AttentionHeads&, const AttentionCache<float>&, double*);
template void attention_backward<double>(double*, const double*, const double*, const AttentionShape&,
                                         const AttentionHeads&, const AttentionCache<double>&, double*);
template void attention_forward<double>(double*, const double*, const AttentionShape&, const AttentionHeads&,
                                        AttentionCache<double>*, AttentionObserver*);

}  // namespace sharp::transformer

#include "transformer/model.hpp"

#include <omp.h>

#include <algorithm>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "nn/gemm.hpp"
#include "nn/linear.hpp"
#include "transformer/blockwise_attention.hpp"
#include "transformer/gelu.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/parallel_items.hpp"
#include "transformer/positional.hpp"
#include "transformer/query_parameters.hpp"

namespace sharp::transformer {

template <class T>
BoundHeads::BoundHeads(const TransformerLayout& layout, const T* params) {
  const TransformerConfig& c = layout.config;
  const norm::LearnableSpec& spec = layout.normaliser;
  heads_per_layer_ = c.heads;
  const std::vector<double> slopes = c.positional == Positional::Alibi ? alibi_slopes(c.heads) : std::vector<double>{};
  std::vector<double> raw(spec.learned.size());
  for (std::size_t l = 0; l < c.layers; ++l) {
    AttentionHeads heads;
    heads.layer = l;
    heads.alibi = slopes;
    for (std::size_t h = 0; h < c.heads; ++h) {
      for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = double(params[layout.scalars[l][i] + h]);
      normalisers_.push_back(norm::make_normaliser(norm::bind(spec, raw.data())));
      heads.normalisers.push_back(normalisers_.back().get());
    }
    heads_.push_back(std::move(heads));
  }
}

std::string BoundHeads::spec(std::size_t layer, std::size_t head) const {
  return normalisers_.at(layer * heads_per_layer_ + head)->name();
}

Transformer::Transformer(const TransformerConfig& config) : layout_(make_layout(config)) {
  if (!learns_scalars()) fixed_ = std::make_shared<const BoundHeads>(layout_, static_cast<const double*>(nullptr));
}

template <class T>
std::shared_ptr<const BoundHeads> Transformer::bind(const T* params) const {
  return fixed_ ? fixed_ : std::make_shared<const BoundHeads>(layout_, params);
}

template BoundHeads::BoundHeads(const TransformerLayout&, const float*);
template BoundHeads::BoundHeads(const TransformerLayout&, const double*);
template std::shared_ptr<const BoundHeads> Transformer::bind(const float*) const;
template std::shared_ptr<const BoundHeads> Transformer::bind(const double*) const;

namespace {

void check_tokens(const std::int32_t* tokens, std::size_t batch, std::size_t length, std::size_t vocab) {
  for (std::size_t i = 0; i < batch * length; ++i)
    if (tokens[i] < 0 || std::size_t(tokens[i]) >= vocab)
      throw BadInput("token " + std::to_string(tokens[i]) + " at position " + std::to_string(i % length) +
                     " of sequence " + std::to_string(i / length) + " is outside the vocabulary [0, " +
                     std::to_string(vocab) + ")");
}

template <class T>
void allocate(ForwardCache<T>& cache, const TransformerConfig& c, std::size_t batch, std::size_t length) {
  const std::size_t R = batch * length, d = c.d_model, F = c.d_ff();
  cache.batch = batch;
  cache.length = length;
  cache.blocks.resize(c.layers);
  for (BlockCache<T>& b : cache.blocks) {
    b.x_in.resize(R * d);
    b.qkv.resize(R * 3 * d);
    b.attn.resize(R * d);
    b.x_mid.resize(R * d);
    b.gelu_slope.resize(R * F);
    b.act.resize(R * F);
    if (c.layer_norm) {
      b.ln1.resize(R * d);
      b.ln2.resize(R * d);
      b.mean1.resize(R);
      b.rstd1.resize(R);
      b.mean2.resize(R);
      b.rstd2.resize(R);
    }
  }
  cache.x_out.resize(R * d);
  if (c.layer_norm) {
    cache.ln_final.resize(R * d);
    cache.mean_f.resize(R);
    cache.rstd_f.resize(R);
  }
}

// Inference takes blockwise attention (O(n·d) memory) when every head is of the softmax family and
// no observer asks for whole probability rows.
bool blockwise(const AttentionHeads& heads, const AttentionObserver* observer) {
  if (observer && observer->wants_probabilities()) return false;
  for (const norm::Normaliser* n : heads.normalisers)
    if (!blockwise_supported(*n)) return false;
  return true;
}

template <class T>
T* data_or_null(std::vector<T>& v, std::size_t offset) {
  return v.empty() ? nullptr : v.data() + offset;
}

}  // namespace

template <class T>
void transformer_forward(const Transformer& model, const T* params, const std::int32_t* tokens, std::size_t batch,
                         std::size_t length, T* logits, std::type_identity_t<ForwardCache<T>>* cache,
                         AttentionObserver* observer) {
  const TransformerLayout& L = model.layout();
  const TransformerConfig& c = model.config();
  c.check_length(length);
  check_tokens(tokens, batch, length, c.vocab);
  const std::size_t n = length, R = batch * n, d = c.d_model, F = c.d_ff(), V = c.vocab, W3 = 3 * d;
  const std::size_t H = c.heads, dh = c.d_head();
  const std::size_t chunks = (R + kChunkRows - 1) / kChunkRows;
  auto chunk_rows = [&](std::size_t ci) { return std::min(kChunkRows, R - ci * kChunkRows); };

  struct Scratch {
    std::vector<T> a, tmp, pre, act;
  };
  // Kept by the calling thread between calls (a trainer calls this for every chunk of every step):
  // buffers allocated once are neither zeroed nor faulted in again. Slot th is team thread th's.
  // (A lambda names a thread_local as its running thread's: the team uses this reference instead.)
  thread_local std::vector<Scratch> kept;
  std::vector<Scratch>& scratch = kept;
  if (scratch.size() < static_cast<std::size_t>(omp_get_max_threads()))
    scratch.resize(static_cast<std::size_t>(omp_get_max_threads()));
  for (Scratch& s : scratch) {
    s.a.resize(kChunkRows * d);
    s.tmp.resize(kChunkRows * d);
    s.pre.resize(kChunkRows * F);
    if (!cache) s.act.resize(kChunkRows * F);
  }
  const std::shared_ptr<const BoundHeads> heads = model.bind(params);
  const bool per_query = learns_per_query(L);
  std::vector<T> x, qkv, attn;  // inference: one residual stream updated in place
  std::vector<double> query_values, query_raw;  // inference: the layer's per-query parameters
  if (cache) {
    allocate(*cache, c, batch, n);
    cache->heads = heads;
  } else {
    x.resize(R * d);
    qkv.resize(R * W3);
    attn.resize(R * d);
  }

  // Embedding and additive positions.
  T* x0 = cache ? cache->blocks[0].x_in.data() : x.data();
  parallel_items(chunks, R * d, [&](std::size_t ci, std::size_t) {
    for (std::size_t r = ci * kChunkRows; r < ci * kChunkRows + chunk_rows(ci); ++r) {
      const std::size_t pos = r % n;
      T* row = x0 + r * d;
      std::copy_n(params + L.embedding + std::size_t(tokens[r]) * d, d, row);
      switch (c.positional) {
        case Positional::Learned:
          for (std::size_t j = 0; j < d; ++j) row[j] += params[L.position + pos * d + j];
          break;
        case Positional::Sinusoidal: add_sinusoidal(row, 1, d, pos); break;
        case Positional::Index: add_index(row, 1, d, pos); break;
        default: break;
      }
    }
  });

  const RopeTable rope = c.positional == Positional::Rope ? rope_table(0, n, dh) : RopeTable{};
  for (std::size_t l = 0; l < c.layers; ++l) {
    const BlockOffsets& o = L.blocks[l];
    BlockCache<T>* bc = cache ? &cache->blocks[l] : nullptr;
    const T* xin = bc ? bc->x_in.data() : x.data();
    T* q = bc ? bc->qkv.data() : qkv.data();
    T* at = bc ? bc->attn.data() : attn.data();
    T* xmid = bc ? bc->x_mid.data() : x.data();
    T* xnext = !cache ? x.data() : l + 1 < c.layers ? cache->blocks[l + 1].x_in.data() : cache->x_out.data();
    AttentionHeads layer_heads = heads->layer(l);
    std::optional<QueryParameters> query;  // parameters learned per query: read from each row's LN1 output
    double *qvalues = nullptr, *qraw = nullptr;
    if (per_query) {
      query.emplace(L, l, layer_heads);
      std::vector<double>& values = bc ? bc->query_values : query_values;
      std::vector<double>& raw = bc ? bc->query_raw : query_raw;
      values.resize(R * H * query->count());
      raw.resize(R * H * query->learned());
      qvalues = values.data();
      qraw = raw.data();
      layer_heads.row_parameters = qvalues;
    }

    parallel_items(chunks, 2 * R * d * W3, [&](std::size_t ci, std::size_t th) {
      const std::size_t r0 = ci * kChunkRows, rows = chunk_rows(ci);
      const T* a = xin + r0 * d;
      if (c.layer_norm) {
        T* dst = bc ? bc->ln1.data() + r0 * d : scratch[th].a.data();
        layer_norm_forward(dst, bc ? bc->mean1.data() + r0 : nullptr, bc ? bc->rstd1.data() + r0 : nullptr, a,
                           params + o.ln1_gain, params + o.ln1_bias, rows, d);
        a = dst;
      }
      if (observer) observer->observe_input(LayerInputChunk<T>{l, r0, rows, d, a});
      if (query) query->forward(params, a, r0, rows, n, qvalues, qraw);
      nn::linear_forward(q + r0 * W3, a, params + o.qkv_weight, params + o.qkv_bias, rows, d, W3);
      if (c.positional == Positional::Rope)  // q and k of every head: 2H blocks of d_head
        for (std::size_t r = r0; r < r0 + rows; ++r) rope_rotate_row(q + r * W3, 2 * H, dh, r % n, rope);
    });

    const AttentionShape shape{batch, n, H, dh, c.causal};
    if (!bc && !per_query && blockwise(layer_heads, observer))
      attention_forward_blockwise(at, q, shape, layer_heads, observer);
    else
      attention_forward(at, q, shape, layer_heads, bc ? &bc->attention : nullptr, observer);

    parallel_items(chunks, 2 * R * d * (d + 2 * F), [&](std::size_t ci, std::size_t th) {
      const std::size_t r0 = ci * kChunkRows, rows = chunk_rows(ci);
      Scratch& s = scratch[th];
      nn::linear_forward(s.tmp.data(), at + r0 * d, params + o.out_weight, params + o.out_bias, rows, d, d);
      for (std::size_t j = 0; j < rows * d; ++j) xmid[r0 * d + j] = xin[r0 * d + j] + s.tmp[j];
      const T* m = xmid + r0 * d;
      if (c.layer_norm) {
        T* dst = bc ? bc->ln2.data() + r0 * d : s.a.data();
        layer_norm_forward(dst, bc ? bc->mean2.data() + r0 : nullptr, bc ? bc->rstd2.data() + r0 : nullptr, m,
                           params + o.ln2_gain, params + o.ln2_bias, rows, d);
        m = dst;
      }
      T* act = bc ? bc->act.data() + r0 * F : s.act.data();
      nn::linear_forward(s.pre.data(), m, params + o.mlp_in_weight, params + o.mlp_in_bias, rows, d, F);
      if (bc)
        gelu_forward_with_slope(act, bc->gelu_slope.data() + r0 * F, s.pre.data(), rows * F);
      else
        gelu_forward(act, s.pre.data(), rows * F);
      nn::linear_forward(s.tmp.data(), act, params + o.mlp_out_weight, params + o.mlp_out_bias, rows, F, d);
      for (std::size_t j = 0; j < rows * d; ++j) xnext[r0 * d + j] = xmid[r0 * d + j] + s.tmp[j];
    });
  }

  if (!logits && !cache) return;
  const T* xo = cache ? cache->x_out.data() : x.data();
  parallel_items(chunks, 2 * R * d * V, [&](std::size_t ci, std::size_t th) {
    const std::size_t r0 = ci * kChunkRows, rows = chunk_rows(ci);
    const T* f = xo + r0 * d;
    if (c.layer_norm) {
      T* dst = cache ? cache->ln_final.data() + r0 * d : scratch[th].a.data();
      layer_norm_forward(dst, cache ? data_or_null(cache->mean_f, r0) : nullptr,
                         cache ? data_or_null(cache->rstd_f, r0) : nullptr, f, params + L.final_gain,
                         params + L.final_bias, rows, d);
      f = dst;
    }
    if (logits)
      nn::gemm(nn::Trans::No, nn::Trans::Yes, rows, V, d, T(1), f, params + L.unembedding, T(0), logits + r0 * V);
  });
}

template void transformer_forward<float>(const Transformer&, const float*, const std::int32_t*, std::size_t,
                                         std::size_t, float*, ForwardCache<float>*, AttentionObserver*);
template void transformer_forward<double>(const Transformer&, const double*, const std::int32_t*, std::size_t,
                                          std::size_t, double*, ForwardCache<double>*, AttentionObserver*);

}  // namespace sharp::transformer

#pragma once
// A transformer (config.hpp, layout.hpp) and its forward pass, for float (training, inference) and
// double (gradient checks, measurements).
//
//   x⁰ = embedding[token] (+ positional)                                   [B, n, d]
//   block l: a = LN1(x), qkv = a W_qkvᵀ + b_qkv (RoPE on q, k), o = attention(qkv) (with the
//            normaliser's parameters read from a per query when it learns them so, query_parameters.hpp),
//            x ← x + o W_outᵀ + b_out;  m = LN2(x), x ← x + GELU(m W_inᵀ + b_in) W_outᵀ + b_out
//   logits = LN_final(x) · unembeddingᵀ                                     [B, n, vocab]
// Without LayerNorm every LN above is the identity. Rows are processed in fixed chunks of
// kChunkRows tokens and attention in fixed tiles, so results are bit-identical for any thread count.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "normalisers/normaliser.hpp"
#include "transformer/attention.hpp"
#include "transformer/layout.hpp"
#include "transformer/observer.hpp"

namespace sharp::transformer {

inline constexpr std::size_t kChunkRows = 64;

// Each head's normaliser for one parameter vector: learned scalars (layout.hpp, layers.L.norm.<p>)
// bound to their current values; without learned scalars, the config's spec for every head.
class BoundHeads {
 public:
  template <class T>
  BoundHeads(const TransformerLayout& layout, const T* params);
  const AttentionHeads& layer(std::size_t l) const { return heads_[l]; }
  // Canonical fixed spec of head h of layer l (e.g. "ssmax:s=0.1803"), for model files and evaluation.
  std::string spec(std::size_t layer, std::size_t head) const;

 private:
  std::size_t heads_per_layer_ = 0;
  std::vector<std::unique_ptr<norm::Normaliser>> normalisers_;  // [layers · heads]
  std::vector<AttentionHeads> heads_;  // [layers]
};

// A model's structure: its layout and, for a spec without learned scalars, its heads.
class Transformer {
 public:
  explicit Transformer(const TransformerConfig& config);  // throws sharp::BadInput on a bad config

  const TransformerConfig& config() const { return layout_.config; }
  const TransformerLayout& layout() const { return layout_; }
  std::size_t parameter_count() const { return layout_.params.size(); }
  bool learns_scalars() const { return layout_.normaliser.any(); }
  // The heads for these parameter values (the shared fixed heads when nothing is learned).
  template <class T>
  std::shared_ptr<const BoundHeads> bind(const T* params) const;

 private:
  TransformerLayout layout_;
  std::shared_ptr<const BoundHeads> fixed_;
};

// Activations kept by a forward pass for the backward ([R = B·n] rows).
template <class T>
struct BlockCache {
  std::vector<T> x_in, ln1, mean1, rstd1, qkv, attn, x_mid, ln2, mean2, rstd2, act;
  std::vector<T> gelu_slope;  // GELU′ at the MLP's pre-activation (gelu.hpp), for the backward
  std::vector<double> query_values, query_raw;  // parameters learned per query (query_parameters.hpp)
  AttentionCache<T> attention;
};
template <class T>
struct ForwardCache {
  std::size_t batch = 0, length = 0;
  std::shared_ptr<const BoundHeads> heads;  // the normalisers the forward used
  std::vector<BlockCache<T>> blocks;  // [layers]
  std::vector<T> x_out, ln_final, mean_f, rstd_f;
  std::vector<T> dx, dtmp, dattn, dact, dqkv;  // transformer_backward's buffers, kept between steps
};

// logits [batch, length, vocab] (nullptr: not computed, e.g. when only the observer matters).
// tokens [batch, length] in [0, vocab). cache == nullptr: inference, memory O(B·n·d): blockwise
// attention (blockwise_attention.hpp) when every head has a temperature (the softmax family) unless the observer wants
// probability rows, else query tiles (O(kTileRows·n) per thread). With a cache every activation is
// kept (O(B·H·n²) for attention) and attention is query-tiled.
// Throws sharp::BadInput for a token out of the vocabulary or a length the config refuses,
// sharp::NumericError if a normaliser meets a NaN.
template <class T>
void transformer_forward(const Transformer& model, const T* params, const std::int32_t* tokens, std::size_t batch,
                         std::size_t length, T* logits, std::type_identity_t<ForwardCache<T>>* cache = nullptr,
                         AttentionObserver* observer = nullptr);

// grads (params' layout) += dL/dparams, given dlogits = dL/dlogits [batch, length, vocab] and the
// cache of transformer_forward on the same params and tokens. Learned normaliser scalars get
// Σ_rows dL/dvalue · dvalue/draw; parameters learned per query also pass their gradient to c, w and
// each query's hidden state (query_parameters.hpp). Runs serially (BLAS included): a trainer calls it on fixed chunks of
// sequences from its own parallel region, so gradients are bit-identical for any thread count.
template <class T>
void transformer_backward(const Transformer& model, const T* params, const std::int32_t* tokens, const T* dlogits,
                          ForwardCache<T>& cache, T* grads);

}  // namespace sharp::transformer

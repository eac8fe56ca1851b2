#pragma once
// Incremental decoding of a causal transformer for generation: one token at a time, with each
// layer's keys and values cached, so the t-th token costs O(t·d) attention instead of a full forward
// pass. The logits of position t equal those of transformer_forward on the first t + 1 tokens (to
// rounding: 1e-12 in double, 1e-5 in float).
// Cache shapes: keys, values [layers][max_length, W] (W = d_model, head h at columns h·d_head).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transformer/model.hpp"
#include "transformer/query_parameters.hpp"

namespace sharp::transformer {

template <class T>
class Decoder {
 public:
  // params must outlive the decoder. Throws sharp::BadInput for an encoder model or a max_length the
  // config refuses.
  Decoder(const Transformer& model, const T* params, std::size_t max_length);

  // Appends `token` at position length() and writes its logits [vocab]. The observer sees the new
  // query row of every head (one-row tiles). Throws sharp::BadInput when the cache is full or the
  // token is outside the vocabulary.
  void push(std::int32_t token, T* logits, AttentionObserver* observer = nullptr);

  std::size_t length() const { return length_; }
  void reset() { length_ = 0; }

 private:
  const T* normed(std::size_t gain, std::size_t bias);  // LayerNorm of x (a_), or x without LayerNorm

  const Transformer& model_;
  const T* params_;
  std::shared_ptr<const BoundHeads> heads_;
  std::size_t max_length_, length_ = 0;
  std::vector<std::vector<T>> keys_, values_;  // [layers][max_length · W]
  std::vector<T> x_, a_, qkv_, attn_, tmp_, pre_, act_, z_, p_;
  std::vector<QueryParameters> query_;  // [layers] when parameters are learned per query, else empty
  std::vector<double> query_values_, query_raw_;  // [H, P], [H, learned]: this row's (query_parameters.hpp)
};

}  // namespace sharp::transformer

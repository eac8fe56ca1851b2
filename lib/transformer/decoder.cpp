#include "transformer/decoder.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "nn/gemm.hpp"
#include "nn/linear.hpp"
#include "transformer/gelu.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/positional.hpp"

namespace sharp::transformer {

template <class T>
Decoder<T>::Decoder(const Transformer& model, const T* params, std::size_t max_length)
    : model_(model), params_(params), heads_(model.bind(params)), max_length_(max_length) {
  const TransformerConfig& c = model.config();
  if (!c.causal) throw BadInput("incremental decoding needs a causal model, not an encoder");
  c.check_length(max_length);
  const std::size_t d = c.d_model;
  keys_.assign(c.layers, std::vector<T>(max_length * d));
  values_.assign(c.layers, std::vector<T>(max_length * d));
  x_.resize(d);
  a_.resize(d);
  qkv_.resize(3 * d);
  attn_.resize(d);
  tmp_.resize(d);
  pre_.resize(c.d_ff());
  act_.resize(c.d_ff());
  z_.resize(max_length);
  p_.resize(max_length);
  if (learns_per_query(model.layout()))
    for (std::size_t l = 0; l < c.layers; ++l) query_.emplace_back(model.layout(), l, heads_->layer(l));
  if (!query_.empty()) {
    query_values_.resize(c.heads * query_[0].count());
    query_raw_.resize(c.heads * query_[0].learned());
  }
}

template <class T>
const T* Decoder<T>::normed(std::size_t gain, std::size_t bias) {
  if (!model_.config().layer_norm) return x_.data();
  layer_norm_forward(a_.data(), static_cast<T*>(nullptr), static_cast<T*>(nullptr), x_.data(), params_ + gain,
                     params_ + bias, 1, model_.config().d_model);
  return a_.data();
}

template <class T>
void Decoder<T>::push(std::int32_t token, T* logits, AttentionObserver* observer) {
  const TransformerLayout& L = model_.layout();
  const TransformerConfig& c = model_.config();
  const std::size_t d = c.d_model, F = c.d_ff(), H = c.heads, dh = c.d_head(), pos = length_;
  if (pos >= max_length_) throw BadInput("decoder cache is full (" + std::to_string(max_length_) + " tokens)");
  if (token < 0 || std::size_t(token) >= c.vocab)
    throw BadInput("token " + std::to_string(token) + " is outside the vocabulary [0, " + std::to_string(c.vocab) +
                   ")");
  const T* P = params_;
  std::copy_n(P + L.embedding + std::size_t(token) * d, d, x_.data());
  switch (c.positional) {
    case Positional::Learned:
      for (std::size_t j = 0; j < d; ++j) x_[j] += P[L.position + pos * d + j];
      break;
    case Positional::Sinusoidal: add_sinusoidal(x_.data(), 1, d, pos); break;
    case Positional::Index: add_index(x_.data(), 1, d, pos); break;
    default: break;
  }
  const T scale = T(1.0 / std::sqrt(double(dh)));
  const std::size_t keys = pos + 1;
  const bool per_query = !query_.empty();
  for (std::size_t l = 0; l < c.layers; ++l) {
    const BlockOffsets& o = L.blocks[l];
    const AttentionHeads& heads = heads_->layer(l);
    const T* a = normed(o.ln1_gain, o.ln1_bias);
    // The normaliser parameters of this query row (one sequence, one token: values [H, P]).
    if (per_query) query_[l].forward(P, a, 0, 1, 1, query_values_.data(), query_raw_.data());
    nn::linear_forward(qkv_.data(), a, P + o.qkv_weight, P + o.qkv_bias, 1, d, 3 * d);
    if (c.positional == Positional::Rope) rope_rotate(qkv_.data(), 1, 3 * d, 2 * H, dh, pos);
    std::copy_n(qkv_.data() + d, d, keys_[l].data() + pos * d);
    std::copy_n(qkv_.data() + 2 * d, d, values_[l].data() + pos * d);
    for (std::size_t h = 0; h < H; ++h) {
      // z_j = q·k_j/√d_head (− ALiBi slope·(pos − j)) over the cached keys j ≤ pos.
      nn::gemm(nn::Trans::No, nn::Trans::Yes, 1, keys, dh, scale, qkv_.data() + h * dh, 3 * d, keys_[l].data() + h * dh,
               d, T(0), z_.data(), keys);
      if (!heads.alibi.empty())
        for (std::size_t j = 0; j < keys; ++j) z_[j] -= T(heads.alibi[h] * double(pos - j));
      if (per_query)
        heads.normalisers[h]->forward(z_.data(), p_.data(), 1, keys, query_values_.data() + h * query_[l].count());
      else
        heads.normalisers[h]->forward(z_.data(), p_.data(), 1, keys);
      nn::gemm(nn::Trans::No, nn::Trans::No, 1, dh, keys, T(1), p_.data(), keys, values_[l].data() + h * dh, d, T(0),
               attn_.data() + h * dh, d);
      if (observer) {
        const AttentionRowStats stats = attention_row_stats(z_.data(), p_.data(), keys, *heads.normalisers[h]);
        const bool want_p = observer->wants_probabilities();
        observer->observe(AttentionTile<T>{0, l, h, pos, 1, &stats, want_p ? p_.data() : nullptr, want_p ? keys : 0});
      }
    }
    nn::linear_forward(tmp_.data(), attn_.data(), P + o.out_weight, P + o.out_bias, 1, d, d);
    for (std::size_t j = 0; j < d; ++j) x_[j] += tmp_[j];
    const T* m = normed(o.ln2_gain, o.ln2_bias);
    nn::linear_forward(pre_.data(), m, P + o.mlp_in_weight, P + o.mlp_in_bias, 1, d, F);
    gelu_forward(act_.data(), pre_.data(), F);
    nn::linear_forward(tmp_.data(), act_.data(), P + o.mlp_out_weight, P + o.mlp_out_bias, 1, F, d);
    for (std::size_t j = 0; j < d; ++j) x_[j] += tmp_[j];
  }
  nn::gemm(nn::Trans::No, nn::Trans::Yes, 1, c.vocab, d, T(1), normed(L.final_gain, L.final_bias), P + L.unembedding,
           T(0), logits);
  ++length_;
}

template class Decoder<float>;
template class Decoder<double>;

}  // namespace sharp::transformer

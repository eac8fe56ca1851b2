// transformer_backward (model.hpp): the forward's steps in reverse, one layer at a time.
#include <algorithm>
#include <vector>

#include "nn/gemm.hpp"
#include "nn/linear.hpp"
#include "transformer/gelu.hpp"
#include "transformer/layer_norm.hpp"
#include "transformer/model.hpp"
#include "transformer/positional.hpp"
#include "transformer/query_parameters.hpp"

namespace sharp::transformer {

template <class T>
void transformer_backward(const Transformer& model, const T* params, const std::int32_t* tokens, const T* dlogits,
                          ForwardCache<T>& cache, T* grads) {
  const TransformerLayout& L = model.layout();
  const TransformerConfig& c = model.config();
  const std::size_t B = cache.batch, n = cache.length, R = B * n, d = c.d_model, F = c.d_ff(), V = c.vocab;
  const std::size_t H = c.heads, dh = c.d_head(), W3 = 3 * d;
  const norm::LearnableSpec& spec = L.normaliser;
  const bool per_query = learns_per_query(L);
  // Every buffer is overwritten before it is read: kept in the cache, a trainer's step allocates (and
  // page-faults) nothing here.
  std::vector<T>&dx = cache.dx, &dtmp = cache.dtmp, &dattn = cache.dattn, &dact = cache.dact, &dqkv = cache.dqkv;
  dx.resize(R * d);
  dtmp.resize(R * d);
  dattn.resize(R * d);
  dact.resize(R * F);
  dqkv.resize(R * W3);

  // logits = f Uᵀ, f = LN_final(x_out)
  const T* f = c.layer_norm ? cache.ln_final.data() : cache.x_out.data();
  nn::gemm(nn::Trans::Yes, nn::Trans::No, V, d, R, T(1), dlogits, f, T(1), grads + L.unembedding);  // dU += dlᵀ f
  nn::gemm(nn::Trans::No, nn::Trans::No, R, d, V, T(1), dlogits, params + L.unembedding, T(0),
           c.layer_norm ? dtmp.data() : dx.data());  // df = dl U
  if (c.layer_norm)
    layer_norm_backward(dx.data(), grads + L.final_gain, grads + L.final_bias, dtmp.data(), cache.x_out.data(),
                        cache.mean_f.data(), cache.rstd_f.data(), params + L.final_gain, R, d);

  const RopeTable rope = c.positional == Positional::Rope ? rope_table(0, n, dh) : RopeTable{};
  // dx holds dL/d(output of block l); it becomes dL/d(input of block l).
  for (std::size_t l = c.layers; l-- > 0;) {
    const BlockOffsets& o = L.blocks[l];
    BlockCache<T>& bc = cache.blocks[l];
    // x_next = x_mid + GELU(pre) W_outᵀ + b_out, pre = m W_inᵀ + b_in, m = LN2(x_mid)
    nn::linear_backward(dact.data(), grads + o.mlp_out_weight, grads + o.mlp_out_bias, dx.data(), bc.act.data(),
                        params + o.mlp_out_weight, R, F, d);
    gelu_backward_from_slope(dact.data(), dact.data(), bc.gelu_slope.data(), R * F);
    const T* m = c.layer_norm ? bc.ln2.data() : bc.x_mid.data();
    nn::linear_backward(dtmp.data(), grads + o.mlp_in_weight, grads + o.mlp_in_bias, dact.data(), m,
                        params + o.mlp_in_weight, R, d, F);
    if (c.layer_norm) {  // dx += LN2ᵀ(dm), through dattn as scratch
      layer_norm_backward(dattn.data(), grads + o.ln2_gain, grads + o.ln2_bias, dtmp.data(), bc.x_mid.data(),
                          bc.mean2.data(), bc.rstd2.data(), params + o.ln2_gain, R, d);
      for (std::size_t j = 0; j < R * d; ++j) dx[j] += dattn[j];
    } else {
      for (std::size_t j = 0; j < R * d; ++j) dx[j] += dtmp[j];
    }
    // x_mid = x_in + attn W_oᵀ + b_o
    nn::linear_backward(dattn.data(), grads + o.out_weight, grads + o.out_bias, dx.data(), bc.attn.data(),
                        params + o.out_weight, R, d, d);
    // dscalars: dL/dθ of the heads' normaliser parameters, [H, np] summed over rows, or per query
    // row [B, H, n, np] when they are learned per query (query_parameters.hpp).
    std::vector<double> dscalars;
    AttentionHeads layer_heads = cache.heads->layer(l);
    const std::size_t np = layer_heads.normalisers[0]->parameter_names().size();
    if (per_query) layer_heads.row_parameters = bc.query_values.data();
    if (spec.any()) dscalars.assign((per_query ? R : 1) * H * np, 0.0);
    attention_backward(dqkv.data(), dattn.data(), bc.qkv.data(), AttentionShape{B, n, H, dh, c.causal}, layer_heads,
                       bc.attention, spec.any() ? dscalars.data() : nullptr);
    for (std::size_t i = 0; i < (per_query ? 0 : spec.learned.size()); ++i)
      for (std::size_t h = 0; h < H; ++h) {
        T& g = grads[L.scalars[l][i] + h];
        const double raw = double(params[L.scalars[l][i] + h]);
        g = T(double(g) + dscalars[h * np + spec.index[i]] * norm::learned_derivative(spec, i, raw));
      }
    if (c.positional == Positional::Rope)
      for (std::size_t r = 0; r < R; ++r) rope_rotate_row(dqkv.data() + r * W3, 2 * H, dh, r % n, rope, true);
    // qkv = a W_qkvᵀ + b_qkv, a = LN1(x_in)
    const T* a = c.layer_norm ? bc.ln1.data() : bc.x_in.data();
    nn::linear_backward(dtmp.data(), grads + o.qkv_weight, grads + o.qkv_bias, dqkv.data(), a, params + o.qkv_weight, R,
                        d, W3);
    if (per_query)  // a also set each query's normaliser parameters: dL/da += their path, dL/dc, dL/dw
      QueryParameters(L, l, layer_heads)
          .backward(params, a, bc.query_raw.data(), dscalars.data(), B, n, grads, dtmp.data());
    if (c.layer_norm) {
      layer_norm_backward(dattn.data(), grads + o.ln1_gain, grads + o.ln1_bias, dtmp.data(), bc.x_in.data(),
                          bc.mean1.data(), bc.rstd1.data(), params + o.ln1_gain, R, d);
      for (std::size_t j = 0; j < R * d; ++j) dx[j] += dattn[j];
    } else {
      for (std::size_t j = 0; j < R * d; ++j) dx[j] += dtmp[j];
    }
  }

  // x⁰ = embedding[token] (+ learned position); the other schemes have no parameters.
  for (std::size_t r = 0; r < R; ++r) {
    T* ge = grads + L.embedding + std::size_t(tokens[r]) * d;
    for (std::size_t j = 0; j < d; ++j) ge[j] += dx[r * d + j];
    if (c.positional == Positional::Learned) {
      T* gp = grads + L.position + (r % n) * d;
      for (std::size_t j = 0; j < d; ++j) gp[j] += dx[r * d + j];
    }
  }
}

template void transformer_backward<float>(const Transformer&, const float*, const std::int32_t*, const float*,
                                          ForwardCache<float>&, float*);
template void transformer_backward<double>(const Transformer&, const double*, const std::int32_t*, const double*,
                                           ForwardCache<double>&, double*);

}  // namespace sharp::transformer

#pragma once
// The weight-norm bound (docs/science.md#weight-norm-bound) per head of a transformer, on its actual
// weights and layer inputs: head h of layer l has q = W_q y + b_q, k = W_k x + b_k (W_q, W_k the
// head's [d_head, d_model] blocks of the qkv weight; RoPE rotates q and k, which keeps their norms)
// and logits q·k/√d_head, so every row's spread obeys
//   δ_row ≤ 2·(σ_max(W_q)·R + ‖b_q‖)·(σ_max(W_k)·R + ‖b_k‖)/√d_head  (+ slope_h·(n − 1) with ALiBi),
// R any bound on the norm of an attention input row of the layer. Two choices of R give two bounds:
// `bound` takes the largest norm measured on the inputs (the tightest), `certificate` the analytic
// √d_model·max|γ| + ‖β_LN‖ where a LayerNorm precedes attention, which holds for every input of
// every length, so the certificate is independent of n (docs/science.md#measuring-heads); without
// LayerNorm the certificate takes the measured R too.
#include <cstddef>
#include <vector>

#include "transformer/layout.hpp"

namespace sharp::head_measure {

struct HeadWeightBound {
  double sigma_q = 0, sigma_k = 0;  // largest singular values of the head's W_q, W_k blocks
  double bias_q = 0, bias_k = 0;  // norms of the head's query and key biases
  double bound = 0;  // the bound on δ_row above with the measured R
  double certificate = 0;  // ... with R = certificate_input_norm
  double certificate_input_norm = 0;  // analytic R with LayerNorm, else the measured one
};

// The largest norm a LayerNorm output row y = γ ⊙ x̂ + β can have: ‖x̂‖ ≤ √d (x̂ has mean 0 and
// variance var/(var + eps) ≤ 1), so ‖y‖ ≤ √d·max|γ| + ‖β‖. gain, bias [d].
template <class T>
double layer_norm_output_norm_bound(const T* gain, const T* bias, std::size_t d);

// Bounds [layers · heads] for inputs of `length` tokens; input_norm_max [layers] (measured).
template <class T>
std::vector<HeadWeightBound> head_weight_bounds(const transformer::TransformerLayout& layout, const T* params,
                                                const std::vector<double>& input_norm_max, std::size_t length);

}  // namespace sharp::head_measure

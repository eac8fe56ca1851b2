#pragma once
// The weight-norm bound (docs/science.md#weight-norm-bound) per head of a transformer, on its actual
// weights and layer inputs: head h of layer l has q = W_q y + b_q, k = W_k x + b_k (W_q, W_k the
// head's [d_head, d_model] blocks of the qkv weight; RoPE rotates q and k, which keeps their norms)
// and logits q·k/√d_head, so every row's spread obeys
//   δ_row ≤ 2·(σ_max(W_q)·R + ‖b_q‖)·(σ_max(W_k)·R + ‖b_k‖)/√d_head  (+ slope_h·(n − 1) with ALiBi),
// R the largest norm of an attention input row of the layer (over every sequence and position).
#include <cstddef>
#include <vector>

#include "transformer/layout.hpp"

namespace sharp::head_measure {

struct HeadWeightBound {
  double sigma_q = 0, sigma_k = 0;   // largest singular values of the head's W_q, W_k blocks
  double bias_q = 0, bias_k = 0;     // norms of the head's query and key biases
  double bound = 0;                  // the bound on δ_row above
};

// Bounds [layers · heads] for inputs of `length` tokens; input_norm_max [layers].
template <class T>
std::vector<HeadWeightBound> head_weight_bounds(const transformer::TransformerLayout& layout, const T* params,
                                                const std::vector<double>& input_norm_max, std::size_t length);

}  // namespace sharp::head_measure

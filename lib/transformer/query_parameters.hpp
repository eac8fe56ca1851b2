#pragma once
// Normaliser parameters learned per query (docs/science.md#asentmax, the published ASEntmax form):
// when the heads' spec learns a parameter per query (normalisers/learned_scalars.hpp, e.g.
// asentmax_query:b=learn:gamma=learn), head h's query row with hidden state h_q — the attention
// block's input after LN1 (the residual stream without LayerNorm), the vector the query projection
// reads — has the raw value
//   raw = c_h + w_h·h_q     c: layers.L.norm.<p> [heads], w: layers.L.norm.<p>.weight [heads, d]
// (the dot product accumulated in double, then added to c) and uses value(raw); a parameter learned
// as a scalar has raw = c_h, a fixed one keeps the bound head's value. With w = 0 every row gets the
// bound head's values bit for bit, so attention equals the static spec's.
// Shapes, for B sequences of n tokens, H heads, P = the normaliser's parameter count (parameter_names()),
// Lq = the spec's learned parameters:
//   hidden [R = B·n, d]   values [B, H, n, P] (AttentionHeads::row_parameters)   raw [B, H, n, Lq]
#include <cstddef>
#include <vector>

#include "normalisers/registry.hpp"
#include "transformer/attention.hpp"
#include "transformer/layout.hpp"

namespace sharp::transformer {

// True when the model's spec learns a parameter per query: its attention then takes row parameters.
inline bool learns_per_query(const TransformerLayout& layout) { return layout.normaliser.any_per_query(); }

// The per-query parameters of one layer, for the layer's bound heads (the values of the parameters
// not learned). The layout and the heads must outlive it.
class QueryParameters {
 public:
  QueryParameters(const TransformerLayout& layout, std::size_t layer, const AttentionHeads& heads);

  std::size_t count() const { return P_; }  // P
  std::size_t learned() const { return info_.size(); }  // Lq

  // values and raw of rows [r0, r0 + rows) (row r is token r % n of sequence r / n) from their
  // hidden states hidden [rows, d] (row r0 first). Writes only those rows' entries, so threads may
  // fill disjoint rows.
  template <class T>
  void forward(const T* params, const T* hidden, std::size_t r0, std::size_t rows, std::size_t n, double* values,
               double* raw) const;

  // Backward of forward over all R = B·n rows: from dvalues [B, H, n, P] = dL/dvalues
  // (attention_backward with row parameters) adds dL/dc and dL/dw to grads (the layout's offsets)
  // and dL/dh_q to dhidden [R, d], the path by which the per-query parameters reach the residual
  // stream. Serial, in a fixed order (a trainer's chunk): the same bits for any thread count.
  template <class T>
  void backward(const T* params, const T* hidden, const double* raw, const double* dvalues, std::size_t batch,
                std::size_t n, T* grads, T* dhidden) const;

 private:
  const TransformerLayout& layout_;
  std::size_t layer_, H_, d_, P_;
  std::vector<double> base_;  // [H, P]: the bound heads' values
  std::vector<const norm::LearnableInfo*> info_;  // [Lq]
};

}  // namespace sharp::transformer

#pragma once
// Online (FlashAttention-style) accumulation of one softmax attention row whose items arrive in
// chunks (docs/science.md#adaptive-temperature, docs/science.md#max-retrieval): for scaled logits z_i = β·e_i and item features h_i ∈ R^W it keeps
//   m = max z,  s = Σ exp(z_i − m),  t = Σ (z_i − m)·exp(z_i − m),  v = Σ exp(z_i − m)·h_i,
// rescaling (s, t, v) whenever m rises, so that at the end
//   α_k = exp(z_k − m)/s,  Σ α_i h_i = v/s,  H(α) = ln s − t/s,
// with O(W) memory whatever the number of items. Sums are in double; within a chunk the weighted
// feature sum is one float GEMV (≤ chunk terms) added to the double v. Deterministic: the result
// depends only on the items and where the chunks start.
#include <cstddef>
#include <vector>

#include "core/online_softmax.hpp"

namespace sharp::max_retrieval {

class OnlineAttention {
 public:
  OnlineAttention(double beta, std::size_t width) : beta_(beta), v_(width, 0.0) {}

  void reset();
  // e [count] raw logits (scaled by β here), h [count, W]; w is scratch of at least count floats.
  // Throws sharp::NumericError on a NaN or infinite logit.
  void add(const float* e, const float* h, std::size_t count, float* w);

  double beta() const { return beta_; }
  double max() const { return softmax_.shift; }  // m, in scaled units (β·e)
  double sum() const { return softmax_.sum; }
  double entropy() const { return softmax_.entropy(); }  // ln s − t/s
  double weight(double e) const;  // α of an item with raw logit e: exp(β e − m)/s
  void weighted_mean(float* c) const;  // c [W] = v / s

 private:
  double beta_;
  OnlineSoftmax<> softmax_;  // of the scaled logits β·e (scale 1), shift = max = m
  std::vector<double> v_;
  std::vector<float> chunk_v_;
};

}  // namespace sharp::max_retrieval

#pragma once
// One attention head with a single query per sample and a pluggable normaliser (docs/science.md#max-retrieval):
//   e_i = (W_Q h_q)ᵀ(W_K h_i)/√d,  α = normaliser(e),  z = Σ_i α_i W_V h_i.
// Computed with the algebra of docs/science.md#max-retrieval, so no per-item key or value is formed:
//   u = W_Kᵀ W_Q h_q / √d,  e_i = u · h_i,  c = Σ_i α_i h_i,  z = W_V c.
// Shapes (B samples, n items each, item/query width W, head dimension d):
//   h [B, n, W] item features, hq [B, W] query features, W_Q, W_K, W_V [d, W], z [B, d].
// The normaliser's own parameters (e.g. softmax's beta) are fixed in the forward; the backward can
// return their per-sample gradients (grad_params) for a caller that learns them.
#include <cstddef>
#include <vector>

#include "normalisers/normaliser.hpp"

namespace sharp::nn {

struct HeadShape {
  std::size_t width = 1;  // W
  std::size_t d = 1;  // head dimension
};

template <class T>
struct HeadWeights {
  const T* W_Q;
  const T* W_K;
  const T* W_V;
};

template <class T>
struct HeadGrads {
  T* W_Q;
  T* W_K;
  T* W_V;
};

// Forward values kept for the backward, and the backward's scratch. Sized by head_forward.
template <class T>
struct HeadCache {
  std::vector<T> q;  // [B, d]   W_Q h_q
  std::vector<T> u;  // [B, W]   W_Kᵀ q / √d
  std::vector<T> e;  // [B, n]   logits
  std::vector<T> alpha;  // [B, n]   normalised weights
  std::vector<T> c;  // [B, W]   Σ α_i h_i
  std::vector<T> dalpha, de;  // [B, n]
  std::vector<T> dc, du, dq;  // [B, W], [B, W], [B, d]
};

template <class T>
void head_forward(T* z, const T* h, const T* hq, const HeadWeights<T>& w, const HeadShape& shape,
                  const norm::Normaliser& normaliser, std::size_t B, std::size_t n, HeadCache<T>& cache);

// Writes dh [B, n, W] and dhq [B, W] (either may be nullptr to skip it); accumulates (+=) the weight
// gradients; writes grad_params [B, P] (P = normaliser.parameter_names().size(); nullptr skips it),
// the gradient of every sample's loss with respect to the normaliser's own parameters. cache must
// hold the forward of these inputs.
template <class T>
void head_backward(T* dh, T* dhq, const HeadGrads<T>& g, const T* dz, const T* h, const T* hq, const HeadWeights<T>& w,
                   const HeadShape& shape, const norm::Normaliser& normaliser, std::size_t B, std::size_t n,
                   HeadCache<T>& cache, double* grad_params = nullptr);

}  // namespace sharp::nn

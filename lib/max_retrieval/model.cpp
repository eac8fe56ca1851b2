#include "max_retrieval/model.hpp"

namespace sharp::max_retrieval {

ModelLayout make_model_layout(const ModelConfig& config) {
  ModelLayout m;
  m.config = config;
  const std::size_t W = config.width, d = config.width;
  m.head = {W, d};
  m.psi = nn::add_mlp(m.params, "psi", {kItemFeatures, W, W, config.depth});
  m.query = nn::add_mlp(m.params, "query", {1, W, W, config.depth});
  m.W_Q = m.params.add("head.W_Q", {d, W}, W);
  m.W_K = m.params.add("head.W_K", {d, W}, W);
  m.W_V = m.params.add("head.W_V", {d, W}, W);
  m.phi = nn::add_mlp(m.params, "phi", {d, W, kClasses, config.depth});
  return m;
}

template <class T>
nn::CrossEntropyTotals model_forward(const ModelLayout& layout, const norm::Normaliser& normaliser, const T* params,
                                     const Batch<T>& batch, ModelCache<T>& cache) {
  const std::size_t B = batch.size, n = batch.n, W = layout.config.width, d = layout.head.d;
  cache.h.resize(B * n * W);
  cache.hq.resize(B * W);
  cache.z.resize(B * d);
  cache.logits.resize(B * kClasses);
  cache.probs.resize(B * kClasses);
  nn::mlp_forward(cache.h.data(), batch.items.data(), layout.psi, params, B * n, cache.psi);
  nn::mlp_forward(cache.hq.data(), batch.query.data(), layout.query, params, B, cache.query);
  const nn::HeadWeights<T> w{params + layout.W_Q, params + layout.W_K, params + layout.W_V};
  nn::head_forward(cache.z.data(), cache.h.data(), cache.hq.data(), w, layout.head, normaliser, B, n, cache.head);
  nn::mlp_forward(cache.logits.data(), cache.z.data(), layout.phi, params, B, cache.phi);
  return nn::cross_entropy_forward(cache.probs.data(), cache.logits.data(), batch.labels.data(), B, kClasses);
}

template <class T>
void model_backward(const ModelLayout& layout, const norm::Normaliser& normaliser, const T* params, T* grads,
                    const Batch<T>& batch, ModelCache<T>& cache, double loss_scale) {
  const std::size_t B = batch.size, n = batch.n, W = layout.config.width, d = layout.head.d;
  cache.dlogits.resize(B * kClasses);
  cache.dz.resize(B * d);
  cache.dh.resize(B * n * W);
  cache.dhq.resize(B * W);
  nn::cross_entropy_backward(cache.dlogits.data(), cache.probs.data(), batch.labels.data(), B, kClasses, loss_scale);
  nn::mlp_backward(cache.dz.data(), grads, cache.dlogits.data(), cache.z.data(), layout.phi, params, B, cache.phi);
  const nn::HeadWeights<T> w{params + layout.W_Q, params + layout.W_K, params + layout.W_V};
  const nn::HeadGrads<T> g{grads + layout.W_Q, grads + layout.W_K, grads + layout.W_V};
  nn::head_backward(cache.dh.data(), cache.dhq.data(), g, cache.dz.data(), cache.h.data(), cache.hq.data(), w,
                    layout.head, normaliser, B, n, cache.head);
  // The inputs need no gradient (dx = nullptr skips the first layers' input GEMMs).
  nn::mlp_backward<T>(nullptr, grads, cache.dhq.data(), batch.query.data(), layout.query, params, B, cache.query);
  nn::mlp_backward<T>(nullptr, grads, cache.dh.data(), batch.items.data(), layout.psi, params, B * n, cache.psi);
}

template nn::CrossEntropyTotals model_forward<float>(const ModelLayout&, const norm::Normaliser&, const float*,
                                                     const Batch<float>&, ModelCache<float>&);
template nn::CrossEntropyTotals model_forward<double>(const ModelLayout&, const norm::Normaliser&, const double*,
                                                      const Batch<double>&, ModelCache<double>&);
template void model_backward<float>(const ModelLayout&, const norm::Normaliser&, const float*, float*,
                                    const Batch<float>&, ModelCache<float>&, double);
template void model_backward<double>(const ModelLayout&, const norm::Normaliser&, const double*, double*,
                                     const Batch<double>&, ModelCache<double>&, double);

}  // namespace sharp::max_retrieval

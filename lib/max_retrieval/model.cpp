#include "max_retrieval/model.hpp"

#include <cstdint>

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
  m.decay_size = m.params.size();
  m.normaliser = norm::parse_learnable_spec(config.normaliser, config.train_n);
  norm::refuse_per_query(m.normaliser, "the max-retrieval model");  // its one query has no hidden state per head
  for (const std::string& p : m.normaliser.learned) m.scalars.push_back(m.params.add("head.norm." + p, {1}, 1));
  return m;
}

namespace {

template <class T>
void init_any(const ModelLayout& layout, T* params, std::uint64_t key) {
  nn::lecun_normal_init(layout.params, params, key);
  for (std::size_t i = 0; i < layout.scalars.size(); ++i)
    params[layout.scalars[i]] = T(norm::learned_initial_raw(layout.normaliser, i, layout.config.train_n));
}

}  // namespace

void init_model_parameters(const ModelLayout& layout, float* params, std::uint64_t key) {
  init_any(layout, params, key);
}
void init_model_parameters(const ModelLayout& layout, double* params, std::uint64_t key) {
  init_any(layout, params, key);
}

template <class T>
norm::Spec bound_normaliser_spec(const ModelLayout& layout, const T* params) {
  std::vector<double> raw;
  for (std::size_t offset : layout.scalars) raw.push_back(double(params[offset]));
  return norm::bind(layout.normaliser, raw.data());
}
template norm::Spec bound_normaliser_spec<float>(const ModelLayout&, const float*);
template norm::Spec bound_normaliser_spec<double>(const ModelLayout&, const double*);

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
  const std::size_t P = layout.scalars.empty() ? 0 : normaliser.parameter_names().size();
  cache.dnorm.assign(B * P, 0.0);
  nn::head_backward(cache.dh.data(), cache.dhq.data(), g, cache.dz.data(), cache.h.data(), cache.hq.data(), w,
                    layout.head, normaliser, B, n, cache.head, P ? cache.dnorm.data() : nullptr);
  // Learned scalars: per-sample gradients summed in sample order, times d value / d raw.
  for (std::size_t i = 0; i < layout.scalars.size(); ++i) {
    double sum = 0.0;
    for (std::size_t b = 0; b < B; ++b) sum += cache.dnorm[b * P + layout.normaliser.index[i]];
    T& gi = grads[layout.scalars[i]];
    gi = T(double(gi) + sum * norm::learned_derivative(layout.normaliser, i, double(params[layout.scalars[i]])));
  }
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

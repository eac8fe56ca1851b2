#include "transformer/query_parameters.hpp"

#include <algorithm>
#include <string>

namespace sharp::transformer {

QueryParameters::QueryParameters(const TransformerLayout& layout, std::size_t layer, const AttentionHeads& heads)
    : layout_(layout),
      layer_(layer),
      H_(heads.normalisers.size()),
      d_(layout.config.d_model),
      P_(heads.normalisers.empty() ? 0 : heads.normalisers[0]->parameter_names().size()) {
  base_.resize(H_ * P_);
  for (std::size_t h = 0; h < H_; ++h) {
    const std::vector<std::string> names = heads.normalisers[h]->parameter_names();
    for (std::size_t k = 0; k < P_; ++k) base_[h * P_ + k] = heads.normalisers[h]->spec().param(names[k]);
  }
  for (std::size_t i = 0; i < layout.normaliser.learned.size(); ++i)
    info_.push_back(&norm::learnable_info(layout.normaliser, i));
}

template <class T>
void QueryParameters::forward(const T* params, const T* hidden, std::size_t r0, std::size_t rows, std::size_t n,
                              double* values, double* raw) const {
  const norm::LearnableSpec& spec = layout_.normaliser;
  const std::size_t Lq = info_.size();
  for (std::size_t r = r0; r < r0 + rows; ++r) {
    const T* x = hidden + (r - r0) * d_;
    const std::size_t b = r / n, t = r % n;
    for (std::size_t h = 0; h < H_; ++h) {
      const std::size_t row = (b * H_ + h) * n + t;
      double* v = values + row * P_;
      std::copy_n(base_.data() + h * P_, P_, v);
      for (std::size_t i = 0; i < Lq; ++i) {
        double dot = 0.0;
        if (spec.per_query[i]) {
          const T* w = params + layout_.query_weights[layer_][i] + h * d_;
          for (std::size_t j = 0; j < d_; ++j) dot += double(w[j]) * double(x[j]);
        }
        const double r_raw = double(params[layout_.scalars[layer_][i] + h]) + dot;
        raw[row * Lq + i] = r_raw;
        v[spec.index[i]] = info_[i]->value(r_raw);
      }
    }
  }
}

template <class T>
void QueryParameters::backward(const T* params, const T* hidden, const double* raw, const double* dvalues,
                               std::size_t batch, std::size_t n, T* grads, T* dhidden) const {
  const norm::LearnableSpec& spec = layout_.normaliser;
  const std::size_t Lq = info_.size(), d = d_;
  std::vector<double> dc(H_ * Lq, 0.0), dw(H_ * Lq * d, 0.0), dx(d);
  for (std::size_t r = 0; r < batch * n; ++r) {
    const T* x = hidden + r * d;
    const std::size_t b = r / n, t = r % n;
    std::fill(dx.begin(), dx.end(), 0.0);
    for (std::size_t h = 0; h < H_; ++h) {
      const std::size_t row = (b * H_ + h) * n + t;
      for (std::size_t i = 0; i < Lq; ++i) {
        // dL/draw = dL/dvalue · d value / d raw; raw = c + w·x.
        const double g = dvalues[row * P_ + spec.index[i]] * info_[i]->derivative(raw[row * Lq + i]);
        dc[h * Lq + i] += g;
        if (!spec.per_query[i]) continue;
        const T* w = params + layout_.query_weights[layer_][i] + h * d;
        double* gw = dw.data() + (h * Lq + i) * d;
        for (std::size_t j = 0; j < d; ++j) {
          gw[j] += g * double(x[j]);
          dx[j] += g * double(w[j]);
        }
      }
    }
    for (std::size_t j = 0; j < d; ++j) dhidden[r * d + j] = T(double(dhidden[r * d + j]) + dx[j]);
  }
  for (std::size_t h = 0; h < H_; ++h)
    for (std::size_t i = 0; i < Lq; ++i) {
      T& gc = grads[layout_.scalars[layer_][i] + h];
      gc = T(double(gc) + dc[h * Lq + i]);
      if (!spec.per_query[i]) continue;
      T* gw = grads + layout_.query_weights[layer_][i] + h * d;
      for (std::size_t j = 0; j < d; ++j) gw[j] = T(double(gw[j]) + dw[(h * Lq + i) * d + j]);
    }
}

template void QueryParameters::forward<float>(const float*, const float*, std::size_t, std::size_t, std::size_t,
                                              double*, double*) const;
template void QueryParameters::forward<double>(const double*, const double*, std::size_t, std::size_t, std::size_t,
                                               double*, double*) const;
template void QueryParameters::backward<float>(const float*, const float*, const double*, const double*, std::size_t,
                                               std::size_t, float*, float*) const;
template void QueryParameters::backward<double>(const double*, const double*, const double*, const double*, std::size_t,
                                                std::size_t, double*, double*) const;

}  // namespace sharp::transformer

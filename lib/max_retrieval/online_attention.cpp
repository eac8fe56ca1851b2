#include "max_retrieval/online_attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/errors.hpp"
#include "nn/gemm.hpp"

namespace sharp::max_retrieval {

void OnlineAttention::reset() {
  softmax_ = {};
  std::fill(v_.begin(), v_.end(), 0.0);
}

void OnlineAttention::add(const float* e, const float* h, std::size_t count, float* w) {
  if (count == 0) return;
  double chunk_max = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(e[i])) throw NumericError("online attention: non-finite logit " + std::to_string(e[i]));
    chunk_max = std::max(chunk_max, beta_ * double(e[i]));
  }
  if (chunk_max > softmax_.shift) {  // rescale what was accumulated against the old maximum
    // glibc's exp, as for the terms below, so that factors and terms agree.
    const double r = softmax_.rescale_to(chunk_max, 1.0, [](double d) { return std::exp(d); });
    for (double& x : v_) x *= r;
    softmax_.max = chunk_max;
  }
  const double m = softmax_.shift;
  double s = 0.0, t = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double z = std::fma(beta_, double(e[i]), -m);  // β e − m, one rounding
    const double wi = std::exp(z);
    s += wi;
    t = std::fma(z, wi, t);
    w[i] = float(wi);
  }
  softmax_.add_sums(s, t);
  const std::size_t W = v_.size();
  chunk_v_.resize(W);
  nn::gemv(nn::Trans::Yes, count, W, 1.0f, h, w, 0.0f, chunk_v_.data());  // Σ w_i h_i
  for (std::size_t k = 0; k < W; ++k) v_[k] += double(chunk_v_[k]);
}

double OnlineAttention::weight(double e) const { return softmax_.weight_at(std::fma(beta_, e, -softmax_.shift)); }

void OnlineAttention::weighted_mean(float* c) const {
  const double s = softmax_.sum;
  for (std::size_t k = 0; k < v_.size(); ++k) c[k] = float(v_[k] / s);
}

}  // namespace sharp::max_retrieval

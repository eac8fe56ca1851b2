#include "max_retrieval/online_attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.hpp"
#include "nn/gemm.hpp"

namespace sharp::max_retrieval {

void OnlineAttention::reset() {
  m_ = -std::numeric_limits<double>::infinity();
  s_ = t_ = 0.0;
  std::fill(v_.begin(), v_.end(), 0.0);
}

void OnlineAttention::add(const float* e, const float* h, std::size_t count, float* w) {
  if (count == 0) return;
  double chunk_max = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(e[i])) throw NumericError("online attention: non-finite logit " + std::to_string(e[i]));
    chunk_max = std::max(chunk_max, beta_ * double(e[i]));
  }
  if (chunk_max > m_) {   // rescale what was accumulated against the old maximum
    if (s_ > 0.0) {
      const double r = std::exp(m_ - chunk_max);
      t_ = (t_ + (m_ - chunk_max) * s_) * r;
      s_ *= r;
      for (double& x : v_) x *= r;
    }
    m_ = chunk_max;
  }
  double s = 0.0, t = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    const double z = beta_ * double(e[i]) - m_;
    const double wi = std::exp(z);
    s += wi;
    t += z * wi;
    w[i] = float(wi);
  }
  s_ += s;
  t_ += t;
  const std::size_t W = v_.size();
  chunk_v_.resize(W);
  nn::gemv(nn::Trans::Yes, count, W, 1.0f, h, w, 0.0f, chunk_v_.data());   // Σ w_i h_i
  for (std::size_t k = 0; k < W; ++k) v_[k] += double(chunk_v_[k]);
}

double OnlineAttention::entropy() const {
  if (!(s_ > 0.0)) throw NumericError("online attention: entropy of an empty row");
  return std::log(s_) - t_ / s_;
}

double OnlineAttention::weight(double e) const { return s_ > 0.0 ? std::exp(beta_ * e - m_) / s_ : 0.0; }

void OnlineAttention::weighted_mean(float* c) const {
  for (std::size_t k = 0; k < v_.size(); ++k) c[k] = float(v_[k] / s_);
}

}  // namespace sharp::max_retrieval

#pragma once
// AdamW (Loshchilov & Hutter, decoupled weight decay), PyTorch's update order:
//   θ ← θ − lr·λ·θ;  m ← β1 m + (1−β1) g;  v ← β2 v + (1−β2) g²;
//   θ ← θ − lr · (m / (1−β1^t)) / (√(v / (1−β2^t)) + ε),   t = steps taken (from 1).
// Weight decay applies to every parameter (biases included, as optax.adamw does without a mask) up to
// decay_size: a layout that puts its undecayed tensors last (learned normaliser scalars) sets it.
// Per-element arithmetic in double, state stored in float32 like the parameters.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sharp::nn {

struct AdamWConfig {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  std::size_t decay_size = SIZE_MAX;  // weight decay on params [0, decay_size) only
};

class AdamW {
 public:
  AdamW(AdamWConfig config, std::size_t size);

  // One update of params [size] with grads [size] at learning rate lr.
  void step(float* params, const float* grads, double lr);
  // The same with each gradient first scaled, float(g·grad_scale) as clip_by_global_norm rounds it
  // (grad_scale 1: as is), on `threads` threads over fixed slices (elementwise: the same bits).
  void step(float* params, const float* grads, double lr, double grad_scale, int threads);

  const AdamWConfig& config() const { return config_; }
  std::int64_t steps() const { return t_; }
  // Optimizer state, for checkpoints: first and second moments [size] and the step count.
  std::vector<float>& m() { return m_; }
  std::vector<float>& v() { return v_; }
  const std::vector<float>& m() const { return m_; }
  const std::vector<float>& v() const { return v_; }
  void set_steps(std::int64_t t) { t_ = t; }

 private:
  AdamWConfig config_;
  std::vector<float> m_, v_;
  std::int64_t t_ = 0;
};

}  // namespace sharp::nn

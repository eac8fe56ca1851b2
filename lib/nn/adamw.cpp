#include "nn/adamw.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>

#include "core/parallel_for.hpp"

namespace sharp::nn {

AdamW::AdamW(AdamWConfig config, std::size_t size) : config_(config), m_(size, 0.0f), v_(size, 0.0f) {}

void AdamW::step(float* params, const float* grads, double lr) { step(params, grads, lr, 1.0, 1); }

void AdamW::step(float* params, const float* grads, double lr, double grad_scale, int threads) {
  ++t_;
  const double b1 = config_.beta1, b2 = config_.beta2;
  const double c1 = 1.0 - std::pow(b1, double(t_)), c2 = 1.0 - std::pow(b2, double(t_));
  const double decay = 1.0 - lr * config_.weight_decay, eps = config_.eps;
  const double step_m = lr / c1, inv_c2 = 1.0 / c2;
  // Restrict-qualified locals: the parameters cannot alias the moments, so the loop vectorises.
  float* __restrict p = params;
  const float* __restrict gr = grads;
  float* __restrict mm = m_.data();
  float* __restrict vv = v_.data();
  const std::size_t size = m_.size();
  auto update = [&](std::size_t first, std::size_t last, double decay, auto scaled) {
#pragma omp simd
    for (std::size_t i = first; i < last; ++i) {
      const double g = decltype(scaled)::value ? double(float(double(gr[i]) * grad_scale)) : double(gr[i]);
      const double m = b1 * mm[i] + (1.0 - b1) * g;
      const double v = b2 * vv[i] + (1.0 - b2) * g * g;
      mm[i] = float(m);
      vv[i] = float(v);
      // The step size in float (sqrt and division are 4x cheaper than in double); it is rounded to
      // float when added to the float parameter anyway.
      const float step = float(step_m * m) / (std::sqrt(float(v * inv_c2)) + float(eps));
      p[i] = float(double(p[i]) * decay) - step;
    }
  };
  const std::size_t decayed = std::min(size, config_.decay_size);
  constexpr std::size_t kSlice = 16384;
  parallel_for((size + kSlice - 1) / kSlice, Loop{"nn/adamw-slices", threads, 0, threads > 1}, [&](std::size_t slice) {
    const std::size_t first = slice * kSlice, last = std::min(size, first + kSlice);
    for (auto [a, b, d] : {std::tuple{first, std::min(last, std::max(first, decayed)), decay},
                           std::tuple{std::max(first, decayed), last, 1.0}}) {
      if (a >= b) continue;
      if (grad_scale != 1.0)
        update(a, b, d, std::true_type{});
      else
        update(a, b, d, std::false_type{});
    }
  });
}

}  // namespace sharp::nn

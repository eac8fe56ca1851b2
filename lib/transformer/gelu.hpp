#pragma once
// Exact GELU, elementwise on `count` values: y = x·Φ(x) = x·(1 + erf(x/√2))/2 (in double).
// The backward uses the input x: dy/dx = Φ(x) + x·φ(x).
#include <cmath>
#include <cstddef>

namespace sharp::transformer {

template <class T>
void gelu_forward(T* y, const T* x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const double v = double(x[i]);
    y[i] = T(0.5 * v * (1.0 + std::erf(v * M_SQRT1_2)));
  }
}

// dx may alias dy.
template <class T>
void gelu_backward(T* dx, const T* dy, const T* x, std::size_t count) {
  constexpr double kInvSqrt2Pi = 0.3989422804014327;
  for (std::size_t i = 0; i < count; ++i) {
    const double v = double(x[i]);
    const double cdf = 0.5 * (1.0 + std::erf(v * M_SQRT1_2));
    dx[i] = T(double(dy[i]) * (cdf + v * kInvSqrt2Pi * std::exp(-0.5 * v * v)));
  }
}

}  // namespace sharp::transformer

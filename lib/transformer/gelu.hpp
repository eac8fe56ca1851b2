#pragma once
// Exact GELU (the erf form, not the tanh approximation), elementwise on `count` values:
//   y = x·Φ(x) = x·(1 + erf(x/√2))/2,   dy/dx = Φ(x) + x·φ(x).
// double (gradient checks, the numpy comparison): std::erf and std::exp, correctly rounded to a few
// ulp. float (training, inference): xsimd's vectorised erf and exp in float, a few float ulp — the
// scalar libm calls took a fifth of a training step. Every float element goes through the same
// batch code (a tail is padded into a full batch), so a value's result does not depend on where it
// sits in the array.
#include <cmath>
#include <cstddef>

namespace sharp::transformer {

void gelu_forward(float* y, const float* x, std::size_t count);
void gelu_forward(double* y, const double* x, std::size_t count);

// The same y with slope = GELU′(x) beside it, for a training forward pass: its backward is then
// dx = dy·slope (gelu_backward_from_slope), one erf per element for both passes where gelu_backward
// takes a second erf. Same bits as gelu_forward and gelu_backward.
void gelu_forward_with_slope(float* y, float* slope, const float* x, std::size_t count);
void gelu_forward_with_slope(double* y, double* slope, const double* x, std::size_t count);
template <class T>
void gelu_backward_from_slope(T* dx, const T* dy, const T* slope, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) dx[i] = dy[i] * slope[i];
}

// dx = dy·GELU′(x); dx may alias dy.
void gelu_backward(float* dx, const float* dy, const float* x, std::size_t count);
void gelu_backward(double* dx, const double* dy, const double* x, std::size_t count);

}  // namespace sharp::transformer

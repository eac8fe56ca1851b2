#pragma once
// ReLU, elementwise on `count` values (any shape). In place is allowed (y == x, dx == dy).
// The backward uses the output y: y > 0 exactly where x > 0; the derivative at 0 is taken as 0.
#include <cstddef>

namespace sharp::nn {

template <class T>
void relu_forward(T* y, const T* x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) y[i] = x[i] > T(0) ? x[i] : T(0);
}

template <class T>
void relu_backward(T* dx, const T* dy, const T* y, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) dx[i] = y[i] > T(0) ? dy[i] : T(0);
}

}  // namespace sharp::nn

#pragma once
// Fully connected layer y = x Wᵀ + b (PyTorch's weight layout).
// Shapes: x [rows, in], W [out, in], b [out] (nullptr: no bias), y [rows, out].
// Gradients accumulate (+=) into dW and db, so a caller can sum several batches into one buffer;
// dx is overwritten (and skipped when dx is nullptr, e.g. for a model's raw input).
#include <cstddef>

namespace sharp::nn {

template <class T>
void linear_forward(T* y, const T* x, const T* W, const T* b, std::size_t rows, std::size_t in, std::size_t out);

template <class T>
void linear_backward(T* dx, T* dW, T* db, const T* dy, const T* x, const T* W, std::size_t rows, std::size_t in,
                     std::size_t out);

}  // namespace sharp::nn

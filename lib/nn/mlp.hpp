#pragma once
// Multi-layer perceptron: in → width → ReLU → (width → width → ReLU) × (hidden − 1) → out, every
// layer linear with bias, no activation after the last (ψ, query MLP and φ of docs/science.md#max-retrieval with hidden = 1).
// Shapes: x [rows, in], y [rows, out]; the parameters live in a flat buffer (nn/parameters.hpp).
#include <cstddef>
#include <string>
#include <vector>

#include "nn/parameters.hpp"

namespace sharp::nn {

struct MlpShape {
  std::size_t in = 1, width = 1, out = 1;
  std::size_t hidden = 1;  // ReLU layers; hidden + 1 linear layers
  std::size_t layers() const { return hidden + 1; }
  std::size_t layer_in(std::size_t l) const { return l == 0 ? in : width; }
  std::size_t layer_out(std::size_t l) const { return l == hidden ? out : width; }
};

// Offsets of each layer's weight [layer_out, layer_in] and bias [layer_out] in the flat buffer.
struct MlpLayout {
  MlpShape shape;
  std::vector<std::size_t> weight, bias;
};

// Adds tensors "<prefix>.<l>.weight" and "<prefix>.<l>.bias" for every layer l (LeCun fan-in).
MlpLayout add_mlp(ParameterLayout& layout, const std::string& prefix, const MlpShape& shape);

// What the forward keeps for the backward: the ReLU outputs of the hidden layers, plus scratch for
// the backward's running gradient. Sized for `rows` by mlp_forward; reused across calls.
template <class T>
struct MlpCache {
  std::vector<std::vector<T>> hidden;  // hidden[l]: [rows, width], output of ReLU after layer l
  std::vector<T> grad_a, grad_b;  // [rows, width] each
  std::size_t rows = 0;
};

template <class T>
void mlp_forward(T* y, const T* x, const MlpLayout& mlp, const T* params, std::size_t rows, MlpCache<T>& cache);

// Accumulates parameter gradients into grads (same layout as params); writes dx [rows, in] unless
// dx is nullptr. cache must hold the forward of this x.
template <class T>
void mlp_backward(T* dx, T* grads, const T* dy, const T* x, const MlpLayout& mlp, const T* params, std::size_t rows,
                  MlpCache<T>& cache);

}  // namespace sharp::nn

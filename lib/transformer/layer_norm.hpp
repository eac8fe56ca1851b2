#pragma once
// LayerNorm over the last dimension: y = gain ⊙ (x − μ)·r + bias, r = 1/√(var + eps), var the
// population variance of the row (sums in double, in eight interleaved partial sums), eps = 1e-5.
// Shapes: x, y, dx, dy [rows, d]; gain, bias, dgain, dbias [d]; mean, rstd [rows] (kept for the
// backward; may be nullptr in the forward when no backward follows).
#include <cstddef>

namespace sharp::transformer {

inline constexpr double kLayerNormEps = 1e-5;

template <class T>
void layer_norm_forward(T* y, T* mean, T* rstd, const T* x, const T* gain, const T* bias, std::size_t rows,
                        std::size_t d);

// dx overwritten; dgain and dbias accumulate (+=) over rows in row order.
template <class T>
void layer_norm_backward(T* dx, T* dgain, T* dbias, const T* dy, const T* x, const T* mean, const T* rstd,
                         const T* gain, std::size_t rows, std::size_t d);

}  // namespace sharp::transformer

#include "nn/linear.hpp"

#include <vector>

#include "nn/gemm.hpp"

namespace sharp::nn {

template <class T>
void linear_forward(T* y, const T* x, const T* W, const T* b, std::size_t rows, std::size_t in, std::size_t out) {
  gemm(Trans::No, Trans::Yes, rows, out, in, T(1), x, W, T(0), y);
  if (!b) return;
  for (std::size_t r = 0; r < rows; ++r) {
    T* yr = y + r * out;
    for (std::size_t o = 0; o < out; ++o) yr[o] += b[o];
  }
}

template <class T>
void linear_backward(T* dx, T* dW, T* db, const T* dy, const T* x, const T* W, std::size_t rows, std::size_t in,
                     std::size_t out) {
  if (dx) gemm(Trans::No, Trans::No, rows, in, out, T(1), dy, W, T(0), dx);  // [rows,out]·[out,in]
  gemm(Trans::Yes, Trans::No, out, in, rows, T(1), dy, x, T(1), dW);  // [out,rows]·[rows,in]
  if (!db) return;
  // Column sums of dy accumulated in double, rows in index order.
  std::vector<double> sum(out, 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    const T* dyr = dy + r * out;
    for (std::size_t o = 0; o < out; ++o) sum[o] += double(dyr[o]);
  }
  for (std::size_t o = 0; o < out; ++o) db[o] = T(double(db[o]) + sum[o]);
}

template void linear_forward<float>(float*, const float*, const float*, const float*, std::size_t, std::size_t,
                                    std::size_t);
template void linear_forward<double>(double*, const double*, const double*, const double*, std::size_t, std::size_t,
                                     std::size_t);
template void linear_backward<float>(float*, float*, float*, const float*, const float*, const float*, std::size_t,
                                     std::size_t, std::size_t);
template void linear_backward<double>(double*, double*, double*, const double*, const double*, const double*,
                                      std::size_t, std::size_t, std::size_t);

}  // namespace sharp::nn

#include "transformer/layer_norm.hpp"

#include <cmath>

namespace sharp::transformer {

template <class T>
void layer_norm_forward(T* y, T* mean, T* rstd, const T* x, const T* gain, const T* bias, std::size_t rows,
                        std::size_t d) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    double s = 0.0;
    for (std::size_t j = 0; j < d; ++j) s += double(xr[j]);
    const double mu = s / double(d);
    double v = 0.0;
    for (std::size_t j = 0; j < d; ++j) v += (double(xr[j]) - mu) * (double(xr[j]) - mu);
    const double inv = 1.0 / std::sqrt(v / double(d) + kLayerNormEps);
    T* yr = y + r * d;
    for (std::size_t j = 0; j < d; ++j) yr[j] = T((double(xr[j]) - mu) * inv * double(gain[j]) + double(bias[j]));
    if (mean) mean[r] = T(mu);
    if (rstd) rstd[r] = T(inv);
  }
}

template <class T>
void layer_norm_backward(T* dx, T* dgain, T* dbias, const T* dy, const T* x, const T* mean, const T* rstd,
                         const T* gain, std::size_t rows, std::size_t d) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    const T* dyr = dy + r * d;
    const double mu = double(mean[r]), inv = double(rstd[r]);
    double sum_g = 0.0, sum_gx = 0.0;   // Σ dx̂, Σ dx̂·x̂ with dx̂ = dy ⊙ gain
    for (std::size_t j = 0; j < d; ++j) {
      const double xhat = (double(xr[j]) - mu) * inv;
      const double g = double(dyr[j]) * double(gain[j]);
      sum_g += g;
      sum_gx += g * xhat;
      dgain[j] += T(double(dyr[j]) * xhat);
      dbias[j] += dyr[j];
    }
    const double mg = sum_g / double(d), mgx = sum_gx / double(d);
    T* dxr = dx + r * d;
    for (std::size_t j = 0; j < d; ++j) {
      const double xhat = (double(xr[j]) - mu) * inv;
      dxr[j] = T(inv * (double(dyr[j]) * double(gain[j]) - mg - xhat * mgx));
    }
  }
}

template void layer_norm_forward<float>(float*, float*, float*, const float*, const float*, const float*, std::size_t,
                                        std::size_t);
template void layer_norm_forward<double>(double*, double*, double*, const double*, const double*, const double*,
                                         std::size_t, std::size_t);
template void layer_norm_backward<float>(float*, float*, float*, const float*, const float*, const float*,
                                         const float*, const float*, std::size_t, std::size_t);
template void layer_norm_backward<double>(double*, double*, double*, const double*, const double*, const double*,
                                          const double*, const double*, std::size_t, std::size_t);

}  // namespace sharp::transformer

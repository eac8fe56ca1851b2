#include "nn/attention_head.hpp"

#include <cmath>

#include "nn/gemm.hpp"

namespace sharp::nn {

template <class T>
void head_forward(T* z, const T* h, const T* hq, const HeadWeights<T>& w, const HeadShape& shape,
                  const norm::Normaliser& normaliser, std::size_t B, std::size_t n, HeadCache<T>& cache) {
  const std::size_t W = shape.width, d = shape.d;
  const T inv_sqrt_d = T(1.0 / std::sqrt(double(d)));
  cache.q.resize(B * d);
  cache.u.resize(B * W);
  cache.e.resize(B * n);
  cache.alpha.resize(B * n);
  cache.c.resize(B * W);
  gemm(Trans::No, Trans::Yes, B, d, W, T(1), hq, w.W_Q, T(0), cache.q.data());  // q = hq W_Qᵀ
  gemm(Trans::No, Trans::No, B, W, d, inv_sqrt_d, cache.q.data(), w.W_K, T(0), cache.u.data());  // u = q W_K / √d
  for (std::size_t b = 0; b < B; ++b)  // e_b = h_b u_b
    gemv(Trans::No, n, W, T(1), h + b * n * W, cache.u.data() + b * W, T(0), cache.e.data() + b * n);
  normaliser.forward(cache.e.data(), cache.alpha.data(), B, n);
  for (std::size_t b = 0; b < B; ++b)  // c_b = h_bᵀ α_b
    gemv(Trans::Yes, n, W, T(1), h + b * n * W, cache.alpha.data() + b * n, T(0), cache.c.data() + b * W);
  gemm(Trans::No, Trans::Yes, B, d, W, T(1), cache.c.data(), w.W_V, T(0), z);  // z = c W_Vᵀ
}

template <class T>
void head_backward(T* dh, T* dhq, const HeadGrads<T>& g, const T* dz, const T* h, const T* hq, const HeadWeights<T>& w,
                   const HeadShape& shape, const norm::Normaliser& normaliser, std::size_t B, std::size_t n,
                   HeadCache<T>& cache, double* grad_params) {
  const std::size_t W = shape.width, d = shape.d;
  const T inv_sqrt_d = T(1.0 / std::sqrt(double(d)));
  cache.dalpha.resize(B * n);
  cache.de.resize(B * n);
  cache.dc.resize(B * W);
  cache.du.resize(B * W);
  cache.dq.resize(B * d);
  // z = c W_Vᵀ
  gemm(Trans::Yes, Trans::No, d, W, B, T(1), dz, cache.c.data(), T(1), g.W_V);  // dW_V += dzᵀ c
  gemm(Trans::No, Trans::No, B, W, d, T(1), dz, w.W_V, T(0), cache.dc.data());  // dc = dz W_V
  // c_b = h_bᵀ α_b
  for (std::size_t b = 0; b < B; ++b)  // dα_b = h_b dc_b
    gemv(Trans::No, n, W, T(1), h + b * n * W, cache.dc.data() + b * W, T(0), cache.dalpha.data() + b * n);
  // α = normaliser(e)
  normaliser.backward(cache.e.data(), cache.alpha.data(), cache.dalpha.data(), cache.de.data(), grad_params, B, n);
  // e_b = h_b u_b
  for (std::size_t b = 0; b < B; ++b)  // du_b = h_bᵀ de_b
    gemv(Trans::Yes, n, W, T(1), h + b * n * W, cache.de.data() + b * n, T(0), cache.du.data() + b * W);
  if (dh) {
    for (std::size_t b = 0; b < B; ++b) {  // dh_b = α_b dc_bᵀ + de_b u_bᵀ
      T* dhb = dh + b * n * W;
      for (std::size_t j = 0; j < n * W; ++j) dhb[j] = T(0);
      ger(n, W, T(1), cache.alpha.data() + b * n, cache.dc.data() + b * W, dhb);
      ger(n, W, T(1), cache.de.data() + b * n, cache.u.data() + b * W, dhb);
    }
  }
  // u = q W_K / √d
  gemm(Trans::Yes, Trans::No, d, W, B, inv_sqrt_d, cache.q.data(), cache.du.data(), T(1), g.W_K);  // dW_K += qᵀ du / √d
  gemm(Trans::No, Trans::Yes, B, d, W, inv_sqrt_d, cache.du.data(), w.W_K, T(0), cache.dq.data());  // dq = du W_Kᵀ / √d
  // q = hq W_Qᵀ
  gemm(Trans::Yes, Trans::No, d, W, B, T(1), cache.dq.data(), hq, T(1), g.W_Q);  // dW_Q += dqᵀ hq
  if (dhq) gemm(Trans::No, Trans::No, B, W, d, T(1), cache.dq.data(), w.W_Q, T(0), dhq);  // dhq = dq W_Q
}

template void head_forward<float>(float*, const float*, const float*, const HeadWeights<float>&, const HeadShape&,
                                  const norm::Normaliser&, std::size_t, std::size_t, HeadCache<float>&);
template void head_forward<double>(double*, const double*, const double*, const HeadWeights<double>&, const HeadShape&,
                                   const norm::Normaliser&, std::size_t, std::size_t, HeadCache<double>&);
template void head_backward<float>(float*, float*, const HeadGrads<float>&, const float*, const float*, const float*,
                                   const HeadWeights<float>&, const HeadShape&, const norm::Normaliser&, std::size_t,
                                   std::size_t, HeadCache<float>&, double*);
template void head_backward<double>(double*, double*, const HeadGrads<double>&, const double*, const double*,
                                    const double*, const HeadWeights<double>&, const HeadShape&,
                                    const norm::Normaliser&, std::size_t, std::size_t, HeadCache<double>&, double*);

}  // namespace sharp::nn

#pragma once
// Internal: what the normaliser implementations share (a precision-generic forward, the
// vector-Jacobian products of softmax rows and of projections). Each implementation file also holds
// its normalisers' registry entries (registry.hpp).
#include <memory>

#include "normalisers/normaliser.hpp"

namespace sharp::norm::detail {

// Routes forward_row of both precisions to Derived::impl<T> (a public member template computing in
// double), so float rows are read and written as float without widening whole rows.
template <class Derived>
class TemplatedForward : public Normaliser {
 public:
  using Normaliser::Normaliser;

 protected:
  void forward_row(const double* z, double* p, std::size_t n, Workspace& ws) const override {
    static_cast<const Derived*>(this)->impl(z, p, n, ws);
  }
  void forward_row(const float* z, float* p, std::size_t n, Workspace& ws) const override {
    static_cast<const Derived*>(this)->impl(z, p, n, ws);
  }
};

// dL/dz for p = softmax(beta z) on one row: grad_z = beta p (v - <p, v>). Returns dL/dbeta =
// sum_k p_k (v_k - <p, v>)(z_k - max z), shifted by max z (the sum is shift-invariant) to avoid
// cancellation on rows like z + 1e6 (0 without with_dbeta: a head without learned scalars skips the
// sum). Masked entries (p = 0) get 0.
double softmax_backward_row(const double* z, const double* p, const double* v, double* grad_z, std::size_t n,
                            double beta, bool with_dbeta = true);

// The vector-Jacobian product of a Jacobian diag(g) - g g^T / sum g (entmax, sparsemax with g = 1 on
// the support, Stieltjes): grad = g v - g (sum g v) / (sum g).
void weighted_projection_vjp(const double* g, const double* v, double* grad, std::size_t n);

}  // namespace sharp::norm::detail

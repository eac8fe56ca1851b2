#pragma once
// The softmax family (docs/science.md#temperature): p = softmax(β·z), β from a Temperature
// (temperature.hpp). softmax, ssmax and adaptive are this class with the rules fixed(β), log_keys(s)
// and adaptive() (registry entries: softmax_family.cpp, adaptive_temperature.cpp). A new member of the family is a
// registry entry whose factory builds a SoftmaxFamily with one of the rules; it then runs on the same
// kernels everywhere (lane groups, long rows split across threads, streaming evaluation, blockwise
// attention), which ask it for its temperature, never for its name.
//
// Forward: the vectorised row kernels (softmax_kernels.hpp); rows of at most 64 entries in lane
// groups (softmax_lanes.hpp) unless β depends on each row's masked entries (log_keys). Backward:
// grad_z = β p (v − <p, v>), plus, for the entropy-driven rule, dL/dβ · β'(H) · dH/dz.
#include <cstddef>
#include <string>
#include <vector>

#include "normalisers/normaliser.hpp"

namespace sharp::norm {

class SoftmaxFamily : public Normaliser {
 public:
  // coefficient_parameter: the spec parameter that is the temperature's coefficient (softmax's beta,
  // ssmax's s), the one parameter backward differentiates; empty for none (adaptive).
  SoftmaxFamily(Spec spec, Temperature temperature, std::string coefficient_parameter = {});

  const Temperature* temperature() const final { return &temperature_; }
  std::vector<std::string> parameter_names() const override;

 protected:
  // grad_params of one row from dL/dβ and the row's unmasked entries. Default: dL/dcoefficient =
  // dL/dβ · dβ/dcoefficient for the coefficient parameter; nothing without one. A member whose
  // parameters are not the coefficient overrides this and parameter_names().
  virtual void parameter_gradients(double dbeta, std::size_t keys, double* grad_params) const;

  void forward_row(const double* z, double* p, std::size_t n, Workspace& ws) const final;
  void forward_row(const float* z, float* p, std::size_t n, Workspace& ws) const final;
  void backward_row(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                    std::size_t n, Workspace& ws) const final;
  bool splits_long_rows() const final { return true; }
  void forward_long_row(const double* z, double* p, std::size_t n, Workspace& ws) const final;
  void forward_long_row(const float* z, float* p, std::size_t n, Workspace& ws) const final;
  std::size_t lane_row_limit() const final;
  void forward_lane_groups(const double* z, double* p, std::size_t rows, std::size_t n, std::size_t first,
                           std::size_t last, unsigned char* bad) const final;
  void forward_lane_groups(const float* z, float* p, std::size_t rows, std::size_t n, std::size_t first,
                           std::size_t last, unsigned char* bad) const final;

 private:
  template <class T>
  void impl(const T* z, T* p, std::size_t n, Workspace& ws, bool parallel) const;
  template <class T>
  void lane_groups(const T* z, T* p, std::size_t rows, std::size_t n, std::size_t first, std::size_t last,
                   unsigned char* bad) const;

  Temperature temperature_;
  std::string coefficient_parameter_;
};

}  // namespace sharp::norm

// The softmax family (softmax_family.hpp): softmax with temperature and SSMax (log-n scaling)
// (docs/science.md#temperature, #ssmax) and their registry entries; adaptive temperature, the
// third member, is in adaptive_temperature.cpp.
#include "normalisers/softmax_family.hpp"

#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/implementation.hpp"
#include "normalisers/registry.hpp"
#include "normalisers/row_checks.hpp"
#include "normalisers/simd/softmax_lanes.hpp"
#include "normalisers/softmax_kernels.hpp"

namespace sharp::norm::detail {

double softmax_backward_row(const double* z, const double* p, const double* v, double* grad_z, std::size_t n,
                            double beta, bool with_dbeta) {
  double pv = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] > 0.0) pv += p[i] * v[i];
  // Element-wise (it vectorises); dL/dbeta, a sum in index order, only when asked for.
  for (std::size_t i = 0; i < n; ++i) grad_z[i] = p[i] > 0.0 ? beta * (p[i] * (v[i] - pv)) : 0.0;
  if (!with_dbeta) return 0.0;
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] > 0.0) m = std::max(m, z[i]);
  double dbeta = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] > 0.0) {
      const double a = p[i] * (v[i] - pv);
      dbeta += a * (z[i] - m);
    }
  }
  return dbeta;
}

}  // namespace sharp::norm::detail

namespace sharp::norm {

SoftmaxFamily::SoftmaxFamily(Spec spec, Temperature temperature, std::string coefficient_parameter)
    : Normaliser(std::move(spec)),
      temperature_(temperature),
      coefficient_parameter_(std::move(coefficient_parameter)) {}

std::vector<std::string> SoftmaxFamily::parameter_names() const {
  if (coefficient_parameter_.empty()) return {};
  return {coefficient_parameter_};
}

void SoftmaxFamily::parameter_gradients(double dbeta, std::size_t keys, double* grad_params) const {
  if (!coefficient_parameter_.empty()) grad_params[0] = dbeta * temperature_.beta_derivative(keys);
}

// The entropy-driven rule (adaptive) has its two passes in adaptive_temperature.cpp.
// The rule log_keys (SSMax, docs/science.md#ssmax): beta = s ln(n), n the unmasked entries.
template <class T>
void SoftmaxFamily::impl(const T* z, T* p, std::size_t n, Workspace& ws, bool parallel) const {
  const Temperature& t = temperature_;
  if (t.needs_entropy_pass()) {
    adaptive_forward_row(z, p, n, t, parallel, ws);
    return;
  }
  if (t.depends_on_keys()) {
    const RowScan scan = scan_row(z, n);
    if (scan.unmasked == 1) {  // one unmasked entry takes all the weight (ln 1 = 0 for SSMax)
      for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<double>(z[i]) > -INFINITY ? T(1) : T(0);
      return;
    }
    softmax_weights(z, p, n, t.beta(scan.unmasked), parallel, ws);
    return;
  }
  softmax_weights(z, p, n, t.beta(n), parallel, ws);
}

void SoftmaxFamily::forward_row(const double* z, double* p, std::size_t n, Workspace& ws) const {
  impl(z, p, n, ws, false);
}
void SoftmaxFamily::forward_row(const float* z, float* p, std::size_t n, Workspace& ws) const {
  impl(z, p, n, ws, false);
}
void SoftmaxFamily::forward_long_row(const double* z, double* p, std::size_t n, Workspace& ws) const {
  impl(z, p, n, ws, true);
}
void SoftmaxFamily::forward_long_row(const float* z, float* p, std::size_t n, Workspace& ws) const {
  impl(z, p, n, ws, true);
}

// The lane kernel takes one beta for a group, or each row's adaptive beta: not a beta that depends
// on each row's masked entries.
std::size_t SoftmaxFamily::lane_row_limit() const { return temperature_.depends_on_keys() ? 0 : kLaneRowMax; }

template <class T>
void SoftmaxFamily::lane_groups(const T* z, T* p, std::size_t rows, std::size_t n, std::size_t first, std::size_t last,
                                unsigned char* bad) const {
  const bool entropy = temperature_.needs_entropy_pass();
  softmax_lane_groups(z, p, rows, n, first, last, temperature_.beta(n), entropy, bad);
}
void SoftmaxFamily::forward_lane_groups(const double* z, double* p, std::size_t rows, std::size_t n, std::size_t first,
                                        std::size_t last, unsigned char* bad) const {
  lane_groups(z, p, rows, n, first, last, bad);
}
void SoftmaxFamily::forward_lane_groups(const float* z, float* p, std::size_t rows, std::size_t n, std::size_t first,
                                        std::size_t last, unsigned char* bad) const {
  lane_groups(z, p, rows, n, first, last, bad);
}

// grad_z = beta p (v - <p,v>); the entropy-driven rule adds its dH/dz term (adaptive_temperature.cpp).
void SoftmaxFamily::backward_row(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                                 std::size_t n, Workspace& ws) const {
  const Temperature& t = temperature_;
  if (t.needs_entropy_pass()) {
    const double dbeta = adaptive_backward_row(z, p, v, grad_z, n, t, ws);
    if (grad_params) parameter_gradients(dbeta, n, grad_params);
    return;
  }
  const std::size_t keys = t.depends_on_keys() ? scan_row(z, n).unmasked : n;
  const double dbeta = detail::softmax_backward_row(z, p, v, grad_z, n, t.beta(keys), grad_params != nullptr);
  if (grad_params) parameter_gradients(dbeta, keys, grad_params);
}

namespace {

std::unique_ptr<Normaliser> softmax_with(const Spec& spec, Temperature t, std::string parameter = {}) {
  return std::make_unique<SoftmaxFamily>(spec, t, std::move(parameter));
}

// docs/science.md#temperature
const NormaliserRegistration kSoftmax{{
    .name = "softmax",
    .formula = "p = softmax(β·z)",
    .section = "temperature",
    .example = "softmax:beta=2",
    .parameters = {{"beta", 1.0, ParameterRange::above(0.0), "inverse temperature"}},
    .aliases = {{"theta", "beta", ParameterRange::above(0.0), [](double theta) { return 1.0 / theta; }}},
    .make = [](const Spec& s) { return softmax_with(s, Temperature::fixed(s.param("beta")), "beta"); },
}};

// docs/science.md#ssmax; learned s: docs/science.md#learned-scalars.
const NormaliserRegistration kSsmax{{
    .name = "ssmax",
    .formula = "p = softmax(s·ln(n)·z)",
    .section = "ssmax",
    .example = "ssmax:s=0.43",
    .parameters = {{"s", std::nullopt, ParameterRange::above(0.0), "scale of ln n"}},
    .learnable = {{
        .key = "s",
        .parameterisation = "`s` directly",
        .start = "`s₀ = 1/ln(train length)`, so `s·ln n = 1` at the training length",
        .initial_raw =
            [](std::size_t length) {
              if (length < 2) throw BadInput("ssmax:s=learn needs a training length >= 2 (initial s = 1/ln(length))");
              return 1.0 / std::log(double(length));
            },
        .value = [](double raw) { return raw; },
        .derivative = [](double) { return 1.0; },
    }},
    .make = [](const Spec& s) { return softmax_with(s, Temperature::log_keys(s.param("s")), "s"); },
}};

}  // namespace

}  // namespace sharp::norm

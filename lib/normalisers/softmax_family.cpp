// softmax with temperature, SSMax (log-n scaling) and adaptive temperature (docs/science.md#temperature, #ssmax, #adaptive-temperature).
#include <cmath>
#include <limits>
#include <type_traits>

#include "normalisers/adaptive_temperature.hpp"
#include "normalisers/factories.hpp"
#include "normalisers/row_checks.hpp"
#include "normalisers/softmax_kernels.hpp"
#include "normalisers/softmax_lanes.hpp"

namespace sharp::norm::detail {

double softmax_backward_row(const double* z, const double* p, const double* v, double* grad_z,
                            std::size_t n, double beta) {
  double pv = 0.0, m = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] > 0.0) {
      pv += p[i] * v[i];
      m = std::max(m, z[i]);
    }
  }
  double dbeta = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] > 0.0) {
      const double a = p[i] * (v[i] - pv);
      grad_z[i] = beta * a;
      dbeta += a * (z[i] - m);
    } else {
      grad_z[i] = 0.0;
    }
  }
  return dbeta;
}

namespace {

// Shared by the three: forward in both precisions, optionally splitting one long row across threads
// (`parallel`: fixed blocks, so the result does not change).
class SoftmaxFamily : public Normaliser {
 public:
  using Normaliser::Normaliser;

 protected:
  virtual void forward_impl(const double* z, double* p, std::size_t n, Workspace& ws, bool parallel) const = 0;
  virtual void forward_impl(const float* z, float* p, std::size_t n, Workspace& ws, bool parallel) const = 0;

  void forward_row(const double* z, double* p, std::size_t n, Workspace& ws) const override {
    forward_impl(z, p, n, ws, false);
  }
  void forward_row(const float* z, float* p, std::size_t n, Workspace& ws) const override {
    forward_impl(z, p, n, ws, false);
  }
  bool splits_long_rows() const override { return true; }

  // Members with a lane kernel for short rows (softmax_lanes.hpp) say how it runs: a fixed beta, or
  // each row's adaptive beta. The default: none (rows one at a time).
  struct LaneMode {
    bool available = false;
    double beta = 1.0;
    bool adaptive = false;
  };
  virtual LaneMode lane_mode() const { return {}; }
  std::size_t lane_row_limit() const override { return lane_mode().available ? kLaneRowMax : 0; }
  void forward_lane_groups(const double* z, double* p, std::size_t rows, std::size_t n, std::size_t first,
                           std::size_t last, unsigned char* bad) const override {
    const LaneMode m = lane_mode();
    softmax_lane_groups(z, p, rows, n, first, last, m.beta, m.adaptive, bad);
  }
  void forward_lane_groups(const float* z, float* p, std::size_t rows, std::size_t n, std::size_t first,
                           std::size_t last, unsigned char* bad) const override {
    const LaneMode m = lane_mode();
    softmax_lane_groups(z, p, rows, n, first, last, m.beta, m.adaptive, bad);
  }
  void forward_long_row(const double* z, double* p, std::size_t n, Workspace& ws) const override {
    forward_impl(z, p, n, ws, true);
  }
  void forward_long_row(const float* z, float* p, std::size_t n, Workspace& ws) const override {
    forward_impl(z, p, n, ws, true);
  }
};

// softmax(beta z), docs/science.md#temperature.
class Softmax final : public SoftmaxFamily {
 public:
  explicit Softmax(const Spec& spec) : SoftmaxFamily(spec), beta_(spec.param("beta")) {}
  std::vector<std::string> parameter_names() const override { return {"beta"}; }

 protected:
  template <class T>
  void impl(const T* z, T* p, std::size_t n, Workspace& ws, bool parallel) const {
    softmax_weights(z, p, n, beta_, parallel, ws);
  }
  void forward_impl(const double* z, double* p, std::size_t n, Workspace& ws, bool par) const override {
    impl(z, p, n, ws, par);
  }
  void forward_impl(const float* z, float* p, std::size_t n, Workspace& ws, bool par) const override {
    impl(z, p, n, ws, par);
  }
  void backward_row(const double* z, const double* p, const double* v, double* grad_z,
                    double* grad_params, std::size_t n, Workspace&) const override {
    const double dbeta = softmax_backward_row(z, p, v, grad_z, n, beta_);
    if (grad_params) grad_params[0] = dbeta;
  }
  LaneMode lane_mode() const override { return {true, beta_, false}; }

 private:
  double beta_;
};

// Scalable-Softmax: softmax(s ln(n) z) with n the number of unmasked entries (docs/science.md#ssmax).
class Ssmax final : public SoftmaxFamily {
 public:
  explicit Ssmax(const Spec& spec) : SoftmaxFamily(spec), s_(spec.param("s")) {}
  std::vector<std::string> parameter_names() const override { return {"s"}; }

 protected:
  template <class T>
  void impl(const T* z, T* p, std::size_t n, Workspace& ws, bool parallel) const {
    const RowScan scan = scan_row(z, n);
    if (scan.unmasked == 1) {   // ln 1 = 0: all weight on the one unmasked entry
      for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<double>(z[i]) > -INFINITY ? T(1) : T(0);
      return;
    }
    softmax_weights(z, p, n, s_ * std::log(static_cast<double>(scan.unmasked)), parallel, ws);
  }
  void forward_impl(const double* z, double* p, std::size_t n, Workspace& ws, bool par) const override {
    impl(z, p, n, ws, par);
  }
  void forward_impl(const float* z, float* p, std::size_t n, Workspace& ws, bool par) const override {
    impl(z, p, n, ws, par);
  }
  void backward_row(const double* z, const double* p, const double* v, double* grad_z,
                    double* grad_params, std::size_t n, Workspace&) const override {
    const double log_n = std::log(static_cast<double>(scan_row(z, n).unmasked));
    const double dbeta = softmax_backward_row(z, p, v, grad_z, n, s_ * log_n);
    if (grad_params) grad_params[0] = dbeta * log_n;   // d beta / d s = ln n
  }

 private:
  double s_;
};

// Adaptive temperature (docs/science.md#adaptive-temperature): H = entropy of softmax(z); p = softmax(beta(H) z).
// The first pass computes the statistics at beta = 1 (float rows: in double lanes with an exp to 12
// digits, as the entropy must be good to ~1e-10: block_kernels.hpp, FloatLanes::kTwelveDigits), the
// second softmax(beta z) (float rows: in float lanes). Double rows, and float rows longer than
// kAdaptiveTermsRow, store the first pass's terms and normalise them when they are the answer
// (beta = 1); shorter float rows store nothing in the first pass and take the float-lane pass at
// beta = 1 too. Measured on 1024-entry float rows: storing costs the first pass 20%, more than the
// beta = 1 rows save unless they are a quarter of all rows; long rows, whose passes cost their
// memory traffic, pass the clamp at H = 5.94 as soon as their weight spreads over 380 entries.
class Adaptive final : public SoftmaxFamily {
 public:
  using SoftmaxFamily::SoftmaxFamily;

 protected:
  static constexpr std::size_t kAdaptiveTermsRow = std::size_t(1) << 16;

  template <class T>
  void impl(const T* z, T* p, std::size_t n, Workspace& ws, bool parallel) const {
    if (std::is_same_v<T, float> && n <= kAdaptiveTermsRow) {
      const OnlineSoftmax<> at_one = softmax_row_entropy_statistics(z, n, 1.0, parallel, ws);
      softmax_weights(z, p, n, adaptive_beta(at_one.entropy()), parallel, ws);
      return;
    }
    const OnlineSoftmax<> at_one = softmax_terms(z, p, n, 1.0, parallel, ws);
    const double beta = adaptive_beta(at_one.entropy());
    if (beta == 1.0) {
      normalise_terms(p, n, 1.0, at_one, parallel, ws);
    } else {
      softmax_weights(z, p, n, beta, parallel, ws);
    }
  }
  void forward_impl(const double* z, double* p, std::size_t n, Workspace& ws, bool par) const override {
    impl(z, p, n, ws, par);
  }
  void forward_impl(const float* z, float* p, std::size_t n, Workspace& ws, bool par) const override {
    impl(z, p, n, ws, par);
  }
  LaneMode lane_mode() const override { return {true, 1.0, true}; }
  // grad_z = beta p (v - <p,v>) + (dL/dbeta) beta'(H) dH/dz, with dL/dbeta as for softmax and
  // dH/dz_j = -q_j (z_j - E_q z) for q = softmax(z) (the entropy's gradient at beta = 1).
  void backward_row(const double* z, const double* p, const double* v, double* grad_z,
                    double*, std::size_t n, Workspace& ws) const override {
    double* q = ws.doubles(0, n);
    const OnlineSoftmax<> at_one = softmax_row(z, q, n, 1.0, false, ws);
    const double h = at_one.entropy();
    const double beta = adaptive_beta(h);
    const double dbeta = softmax_backward_row(z, p, v, grad_z, n, beta);
    const double slope = adaptive_beta_derivative(h);
    if (slope == 0.0) return;
    const double dh = dbeta * slope;   // dL/dH
    double mean = 0.0;                 // E_q (z - max z)
    for (std::size_t i = 0; i < n; ++i) {
      if (q[i] > 0.0) mean += q[i] * (z[i] - at_one.max);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (q[i] > 0.0) grad_z[i] -= dh * q[i] * ((z[i] - at_one.max) - mean);
    }
  }
};

}  // namespace

std::unique_ptr<Normaliser> make_softmax(const Spec& spec) { return std::make_unique<Softmax>(spec); }
std::unique_ptr<Normaliser> make_ssmax(const Spec& spec) { return std::make_unique<Ssmax>(spec); }
std::unique_ptr<Normaliser> make_adaptive(const Spec& spec) { return std::make_unique<Adaptive>(spec); }

}  // namespace sharp::norm::detail

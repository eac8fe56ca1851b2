#pragma once
// The normaliser family (docs/science.md#remedies): one interface, built from a spec string, mapping a
// batch of rows of logits to probabilities, forward and backward, for double and float. Each
// normaliser is registered beside its class (registry.hpp); make_normaliser builds one by name.
//
// Shapes: z, p, v, grad_z are [rows, n] row-major (outputs must not alias inputs); grad_params is
// [rows, P] with P = parameter_names().size() (one gradient per row, so callers that learn a shared
// parameter sum the rows themselves in a fixed order: deterministic for any thread count).
// Masked entries are -inf: they get p = 0 and grad_z = 0, and the other entries equal the result on
// the unmasked sub-row (to rounding: sums may run in another order, |difference| <= 1e-15). Methods that depend on n (ssmax, asentmax) use n = number of unmasked entries.
// A NaN or +inf logit, or a fully masked row, throws sharp::NumericError naming the (first such) row.
// Rows run in parallel with OpenMP; a few very long rows of the softmax family are instead split
// into fixed blocks across threads. Results do not depend on the thread count.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "normalisers/spec.hpp"
#include "normalisers/temperature.hpp"
#include "normalisers/workspace.hpp"

namespace sharp::norm {

class Normaliser {
 public:
  explicit Normaliser(Spec spec) : spec_(std::move(spec)) {}
  virtual ~Normaliser() = default;
  Normaliser(const Normaliser&) = delete;
  Normaliser& operator=(const Normaliser&) = delete;

  const Spec& spec() const { return spec_; }
  std::string name() const { return format_spec(spec_); }  // canonical spec text

  // The continuous parameters backward() differentiates, in grad_params order (e.g. {"beta"},
  // {"b", "gamma", "delta"}); empty for adaptive, topk, argmax, sparsemax, entmax15.
  virtual std::vector<std::string> parameter_names() const { return {}; }

  // For the softmax family (p = softmax(β·z), softmax_family.hpp), the rule that gives β; nullptr
  // for every other normaliser. Streaming evaluation and blockwise attention take exactly the
  // normalisers that have one.
  virtual const Temperature* temperature() const { return nullptr; }

  void forward(const double* z, double* p, std::size_t rows, std::size_t n) const;
  void forward(const float* z, float* p, std::size_t rows, std::size_t n) const;

  // Vector-Jacobian product: v = dL/dp; writes grad_z = dL/dz and (if not null) grad_params = dL/dθ
  // per row. p must be forward(z). The float version computes in double.
  void backward(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                std::size_t rows, std::size_t n) const;
  void backward(const float* z, const float* p, const float* v, float* grad_z, double* grad_params, std::size_t rows,
                std::size_t n) const;

  // Rows with parameters of their own (a per-query form, docs/science.md#asentmax): row_params
  // [rows, P] (P = parameter_names().size(), in that order) stand for the spec's values, row r using
  // row r's. Only for normalisers that take_row_parameters() (else std::logic_error). A row at the
  // spec's values gets the bits forward() and backward() give it; grad_params as in backward().
  virtual bool takes_row_parameters() const { return false; }
  void forward(const double* z, double* p, std::size_t rows, std::size_t n, const double* row_params) const;
  void forward(const float* z, float* p, std::size_t rows, std::size_t n, const double* row_params) const;
  void backward(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                std::size_t rows, std::size_t n, const double* row_params) const;
  void backward(const float* z, const float* p, const float* v, float* grad_z, double* grad_params, std::size_t rows,
                std::size_t n, const double* row_params) const;

 protected:
  virtual void forward_row(const double* z, double* p, std::size_t n, Workspace& ws) const = 0;
  // Default: widen the row to double, run the double kernel, narrow the result.
  virtual void forward_row(const float* z, float* p, std::size_t n, Workspace& ws) const;
  virtual void backward_row(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                            std::size_t n, Workspace& ws) const = 0;
  // The same with this row's parameters params [P] (normalisers that take_row_parameters()).
  virtual void forward_row_with(const double* z, double* p, std::size_t n, const double* params, Workspace& ws) const;
  virtual void forward_row_with(const float* z, float* p, std::size_t n, const double* params, Workspace& ws) const;
  virtual void backward_row_with(const double* z, const double* p, const double* v, double* grad_z, double* grad_params,
                                 std::size_t n, const double* params, Workspace& ws) const;

  // Softmax-family normalisers can split one long row across threads (fixed blocks, so results do
  // not change); they override these and return true from splits_long_rows().
  virtual bool splits_long_rows() const { return false; }
  virtual void forward_long_row(const double* z, double* p, std::size_t n, Workspace& ws) const {
    forward_row(z, p, n, ws);
  }
  virtual void forward_long_row(const float* z, float* p, std::size_t n, Workspace& ws) const {
    forward_row(z, p, n, ws);
  }

  // Normalisers with a kernel for short rows kLaneRowsOf<T> at a time (softmax_lanes.hpp) override
  // these: the longest row it takes (0: none), and the kernel for the groups [first, last) of rows x n
  // logits (as softmax_lane_groups). bad[g − first] = 1 where a row of group g is bad (or out of the
  // kernel's range); forward then redoes that group row by row, each row first alone in the lane
  // kernel (so a good row gets the bits it gets in any group), else with forward_row, which reports
  // a bad row.
  virtual std::size_t lane_row_limit() const { return 0; }
  virtual void forward_lane_groups(const double* z, double* p, std::size_t rows, std::size_t n, std::size_t first,
                                   std::size_t last, unsigned char* bad) const {}
  virtual void forward_lane_groups(const float* z, float* p, std::size_t rows, std::size_t n, std::size_t first,
                                   std::size_t last, unsigned char* bad) const {}

 private:
  template <class T>
  void forward_any(const T* z, T* p, std::size_t rows, std::size_t n) const;
  template <class T>
  void forward_in_lanes(const T* z, T* p, std::size_t rows, std::size_t n) const;
  template <class T>
  void forward_with_rows(const T* z, T* p, std::size_t rows, std::size_t n, const double* row_params) const;
  template <class T>
  void backward_any(const T* z, const T* p, const T* v, T* grad_z, double* grad_params, std::size_t rows, std::size_t n,
                    const double* row_params) const;
  void require_row_parameters() const;

  Spec spec_;
};

// Builds the normaliser of a parsed spec / of spec text (throws sharp::BadInput on a bad spec).
std::unique_ptr<Normaliser> make_normaliser(const Spec& spec);
std::unique_ptr<Normaliser> make_normaliser(std::string_view spec_text);

// Entropy in nats of a probability row, 0 ln 0 = 0 (docs/science.md#notation), accumulated in double.
double entropy(const double* p, std::size_t n);
double entropy(const float* p, std::size_t n);

// The β a softmax-family normaliser uses for one row (of n entries, -inf masked): its temperature's
// beta(unmasked entries), or beta_after(H) of the row's entropy at β = 1 (computed as the normaliser
// does, for float rows too).
double row_beta(const Temperature& temperature, const double* z, std::size_t n);
double row_beta(const Temperature& temperature, const float* z, std::size_t n);

// The beta adaptive temperature uses for a row (docs/science.md#adaptive-temperature), and the entropy at beta = 1 behind it.
struct AdaptiveRowBeta {
  double entropy;  // H of softmax(z) at beta = 1
  double beta;  // adaptive_beta(entropy)
};
AdaptiveRowBeta adaptive_row_beta(const double* z, std::size_t n);
AdaptiveRowBeta adaptive_row_beta(const float* z, std::size_t n);

}  // namespace sharp::norm

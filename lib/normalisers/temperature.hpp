#pragma once
// The inverse temperature of the softmax family, p = softmax(β·z) (docs/science.md#temperature): the
// one question evaluation (max_retrieval/streaming_eval), blockwise attention, attention statistics
// and the lane kernels ask a normaliser (Normaliser::temperature()), never its name. Three rules:
//   fixed(β)       β                                            softmax:beta=B
//   log_keys(s)    β = s·ln(keys), keys = unmasked entries      ssmax:s=S (docs/science.md#ssmax)
//   adaptive()     a first pass at β = 1 gives the entropy H of softmax(z); then
//                  β = beta_after(H) (docs/science.md#adaptive-temperature)
// A new member of the family picks one of them (its own parameters, its own registry entry); a new
// rule is added here, and every caller above then handles it by the three questions below.
#include <cmath>
#include <cstddef>
#include <stdexcept>

#include "normalisers/adaptive_temperature.hpp"

namespace sharp::norm {

class Temperature {
 public:
  static Temperature fixed(double beta) { return {Rule::Fixed, beta}; }
  static Temperature log_keys(double s) { return {Rule::LogKeys, s}; }
  static Temperature adaptive() { return {Rule::Adaptive, 1.0}; }

  // β of a row with `keys` unmasked entries; for a rule that needs the entropy pass, the β of that
  // first pass (1).
  double beta(std::size_t keys) const {
    switch (rule_) {
      case Rule::Fixed: return coefficient_;
      case Rule::LogKeys: return coefficient_ * std::log(static_cast<double>(keys));
      case Rule::Adaptive: return 1.0;
    }
    return coefficient_;
  }

  // Whether β differs between rows of one length that mask different entries (then a batch of
  // rows cannot share one β: the lane kernels take no such rule).
  bool depends_on_keys() const { return rule_ == Rule::LogKeys; }

  // Whether β comes from the entropy H of softmax(z) at β = 1 (a first pass over the row).
  bool needs_entropy_pass() const { return rule_ == Rule::Adaptive; }
  // β after that pass, and dβ/dH; only for needs_entropy_pass() (std::logic_error otherwise).
  double beta_after(double entropy) const {
    require_entropy_pass();
    return adaptive_beta(entropy);
  }
  double beta_after_derivative(double entropy) const {
    require_entropy_pass();
    return adaptive_beta_derivative(entropy);
  }

  // β = coefficient·g(keys) for the rules without an entropy pass (g = 1 or ln keys): the
  // coefficient (β, s) and dβ/dcoefficient = g(keys), for a parameter gradient.
  double coefficient() const { return coefficient_; }
  double beta_derivative(std::size_t keys) const {
    return rule_ == Rule::LogKeys ? std::log(static_cast<double>(keys)) : rule_ == Rule::Fixed ? 1.0 : 0.0;
  }

 private:
  enum class Rule { Fixed, LogKeys, Adaptive };
  Temperature(Rule rule, double coefficient) : rule_(rule), coefficient_(coefficient) {}
  void require_entropy_pass() const {
    if (rule_ != Rule::Adaptive) throw std::logic_error("beta_after: this temperature needs no entropy pass");
  }

  Rule rule_;
  double coefficient_;
};

}  // namespace sharp::norm

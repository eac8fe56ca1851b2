#pragma once
// Learned normaliser scalars (docs/science.md#learned-scalars), defined once for every trainer.
// A parameter written `learn` instead of a number is trained, e.g. ssmax:s=learn,
// entmax:alpha=learn, asentmax:b=learn:gamma=learn (a number keeps it fixed). Which parameters may be
// learned, their parameterisation raw -> value and their start values are the registry's
// (registry.hpp, LearnableInfo; listed by `sharp-normalise --list`). A trainer stores the raw,
// unconstrained value per head, applies no weight decay to it, and gets its gradient from
// Normaliser::backward's grad_params times d value / d raw. bind() turns raw values back into an
// ordinary fixed spec (for evaluation and for the model file's description).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "normalisers/spec.hpp"

namespace sharp::norm {

struct LearnableSpec {
  Spec spec;                          // learned parameters at their initial values
  std::vector<std::string> learned;   // learned parameter names, in the normaliser's parameter_names() order
  std::vector<std::size_t> index;     // [learned.size()]: position of each in parameter_names()
  bool any() const { return !learned.empty(); }
};

// Parses a spec that may say `learn` (throws sharp::BadInput naming the parameter when it cannot be
// learned or is not a scalar, and for every error parse_spec reports). train_length sets start
// values that depend on it (ssmax's s = 1/ln(train_length), which needs train_length >= 2).
LearnableSpec parse_learnable_spec(std::string_view text, std::size_t train_length);

// The raw value a learned parameter starts from, its constrained value, and d value / d raw.
double learned_initial_raw(const LearnableSpec& spec, std::size_t i, std::size_t train_length);
double learned_value(const LearnableSpec& spec, std::size_t i, double raw);
double learned_derivative(const LearnableSpec& spec, std::size_t i, double raw);

// The fixed spec with learned parameter i set to learned_value(raw[i]). Not range-checked: a learned
// s may leave the range s > 0 during training and the normaliser is still defined.
Spec bind(const LearnableSpec& spec, const double* raw);

}  // namespace sharp::norm

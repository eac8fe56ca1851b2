#pragma once
// Learned normaliser scalars (docs/science.md#learned-scalars), defined once for every trainer.
// A parameter written `learn` instead of a number is trained, e.g. ssmax:s=learn,
// entmax:alpha=learn, asentmax:b=learn:gamma=learn (a number keeps it fixed). Which parameters may be
// learned, their parameterisation raw -> value and their start values are the registry's
// (registry.hpp, LearnableInfo; listed by `sharp-normalise --list`). A trainer stores the raw,
// unconstrained value per head, applies no weight decay to it, and gets its gradient from
// Normaliser::backward's grad_params times d value / d raw. bind() turns raw values back into an
// ordinary fixed spec (for evaluation and for the model file's description).
// A parameter learned per query (asentmax_query:b=learn, docs/science.md#asentmax) has, besides
// its raw scalar c, a vector w read against each query's hidden state h_q (raw = c + w·h_q); bind()
// gives the spec at w = 0, and only a model with hidden states (the transformer) learns it.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "normalisers/spec.hpp"

namespace sharp::norm {

struct LearnableSpec {
  Spec spec;  // learned parameters at their initial values
  std::vector<std::string> learned;  // learned parameter names, in the normaliser's parameter_names() order
  std::vector<std::size_t> index;  // [learned.size()]: position of each in parameter_names()
  std::vector<bool> per_query;  // [learned.size()]: learned per query (a vector w besides c)
  bool any() const { return !learned.empty(); }
  bool any_per_query() const;
};

// Parses a spec that may say `learn` (throws sharp::BadInput naming the parameter when it cannot be
// learned, and for every error parse_spec reports). train_length sets start values that depend on
// it (ssmax's s = 1/ln(train_length), which needs train_length >= 2).
LearnableSpec parse_learnable_spec(std::string_view text, std::size_t train_length);

// Throws sharp::BadInput when the spec learns a parameter per query: for a model without hidden
// states to read them from (`trainer` names it in the message, e.g. "sharp-train-max").
void refuse_per_query(const LearnableSpec& spec, const std::string& trainer);

// The raw value a learned parameter starts from (c's; w starts at 0), its constrained value, and
// d value / d raw.
double learned_initial_raw(const LearnableSpec& spec, std::size_t i, std::size_t train_length);
double learned_value(const LearnableSpec& spec, std::size_t i, double raw);
double learned_derivative(const LearnableSpec& spec, std::size_t i, double raw);

// The fixed spec with learned parameter i set to learned_value(raw[i]). Not range-checked: a learned
// s may leave the range s > 0 during training and the normaliser is still defined.
Spec bind(const LearnableSpec& spec, const double* raw);

// Learned parameter i's registry entry (what learned_value and learned_derivative call), for loops
// that would otherwise look it up per row.
const LearnableInfo& learnable_info(const LearnableSpec& spec, std::size_t i);

}  // namespace sharp::norm

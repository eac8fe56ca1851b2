#pragma once
// The value check of a parameter that names head normalisers (sharp-train-max's --normaliser, each
// item of sharp-eval-max's in-point list): a spec of the list in docs/science.md#remedies, parsed by lib/normalisers.
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "normalisers/learned_scalars.hpp"
#include "normalisers/registry.hpp"
#include "normalisers/spec.hpp"
#include "runners/value.hpp"

namespace sharp {

// The `allowed` text of such a parameter (--help, --describe, results/README.md), from the registry:
// the registered names, and for a trainer's spec the parameters it may learn.
inline std::string normaliser_spec_allowed() {
  return "a normaliser spec name[:key=value...] (docs/science.md#remedies; `sharp-normalise --list`), name one of " +
         norm::normaliser_names_text();
}
inline std::string learnable_normaliser_spec_allowed() {
  return normaliser_spec_allowed() + "; `learn` for a number trains it (docs/science.md#learned-scalars), learnable: " +
         norm::learnable_parameters_text();
}

inline std::optional<std::string> normaliser_spec_error(const runner::Value& v) {
  try {
    norm::parse_spec(std::get<std::string>(v));
  } catch (const BadInput& e) {
    return std::string("is not a normaliser spec: ") + e.what();
  }
  return std::nullopt;
}

// sharp-train-max's --normaliser: a spec that may learn scalars (docs/science.md#learned-scalars),
// e.g. ssmax:s=learn, entmax:alpha=learn, asentmax:b=learn:gamma=learn.
inline std::optional<std::string> learnable_normaliser_spec_error(const runner::Value& v) {
  try {
    norm::parse_learnable_spec(std::get<std::string>(v), 16);
  } catch (const BadInput& e) {
    return std::string("is not a normaliser spec: ") + e.what();
  }
  return std::nullopt;
}

// sharp-eval-max's in-point list item: a spec, or `trained` (the model's own training normaliser
// with its learned scalars).
inline constexpr const char* kTrainedNormaliser = "trained";
inline std::optional<std::string> eval_normaliser_spec_error(const runner::Value& v) {
  if (std::get<std::string>(v) == kTrainedNormaliser) return std::nullopt;
  return normaliser_spec_error(v);
}

}  // namespace sharp

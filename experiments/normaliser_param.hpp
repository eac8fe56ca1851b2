#pragma once
// The value check of a parameter that names head normalisers (sharp-train-max's --normaliser, each
// item of sharp-eval-max's in-point list): a spec of the list in docs/science.md#remedies, parsed by lib/normalisers.
#include <algorithm>
#include <optional>
#include <sstream>
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
         norm::learnable_parameters_text() + " (those per query in the transformer only)";
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
// e.g. ssmax:s=learn, entmax:alpha=learn, asentmax:b=learn:gamma=learn; not per query.
inline std::optional<std::string> learnable_normaliser_spec_error(const runner::Value& v) {
  try {
    norm::refuse_per_query(norm::parse_learnable_spec(std::get<std::string>(v), 16), "sharp-train-max");
  } catch (const BadInput& e) {
    return std::string("is not a normaliser spec: ") + e.what();
  }
  return std::nullopt;
}

// What two spellings of one normaliser share (the grid's ParamSpec::identity): the canonical spec,
// parameters in declared order with defaults filled and aliases resolved, a learned one as `learn`;
// so softmax, softmax:beta=1 and softmax:theta=1 are one value. Text that is no spec (`trained`, or
// one the check refuses) is its own identity.
inline std::string normaliser_identity(const runner::Value& v) {
  const std::string& text = std::get<std::string>(v);
  try {
    const norm::LearnableSpec spec = norm::parse_learnable_spec(text, 16);
    std::string out, item;
    std::istringstream parts(norm::format_spec(spec.spec));
    while (std::getline(parts, item, ':')) {
      const std::string key = item.substr(0, item.find('='));
      const bool learned = std::find(spec.learned.begin(), spec.learned.end(), key) != spec.learned.end();
      if (!out.empty()) out += ':';
      out += learned ? key + "=learn" : item;
    }
    return out;
  } catch (const BadInput&) {
    return text;
  }
}

// sharp-eval-max's in-point list item: a spec, or `trained` (the model's own training normaliser
// with its learned scalars).
inline constexpr const char* kTrainedNormaliser = "trained";
inline std::optional<std::string> eval_normaliser_spec_error(const runner::Value& v) {
  if (std::get<std::string>(v) == kTrainedNormaliser) return std::nullopt;
  return normaliser_spec_error(v);
}

}  // namespace sharp

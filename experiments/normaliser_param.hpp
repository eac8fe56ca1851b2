#pragma once
// The value check of a parameter that names head normalisers (sharp-train-max's --normaliser, each
// item of sharp-eval-max's in-point list): a spec of the list in docs/science.md#remedies, parsed by lib/normalisers.
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "normalisers/spec.hpp"
#include "runners/value.hpp"

namespace sharp {

inline std::optional<std::string> normaliser_spec_error(const runner::Value& v) {
  try {
    norm::parse_spec(std::get<std::string>(v));
  } catch (const BadInput& e) {
    return std::string("is not a normaliser spec: ") + e.what();
  }
  return std::nullopt;
}

}  // namespace sharp

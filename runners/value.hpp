#pragma once
// A parameter value and its canonical text. Canonical strings are part of the file format: point
// ids and config fingerprints hash them, so they must be stable (docs/architecture.md#points-parts-merge-resume).
#include <cstdint>
#include <string>
#include <variant>

namespace sharp::runner {

enum class ParamType { Integer, Real, Text };

using Value = std::variant<std::int64_t, double, std::string>;

// Integers in decimal, reals in shortest round-trip form (std::to_chars), text as is.
std::string canonical(const Value& v);

std::string type_name(ParamType t);

}  // namespace sharp::runner

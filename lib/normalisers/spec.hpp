#pragma once
// Normaliser specs (docs/science.md#remedies): `name[:key=value[:key=value]]`, lists
// comma-separated. Parsing validates names, parameter names and ranges up front, so a bad spec is a
// sharp::BadInput (exit status 2) before any work starts. The names, parameters, defaults and ranges
// are the registry's (registry.hpp).
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sharp::norm {

struct Spec {
  std::string name;  // a registered name (registry.hpp)
  std::map<std::string, double> params;  // every parameter of `name`, defaults filled in

  double param(const std::string& key) const;  // throws std::out_of_range if absent
  bool operator==(const Spec&) const = default;
};

// Parses one spec. Throws sharp::BadInput naming the problem and what is allowed:
// unknown name or parameter, a repeated or missing parameter, a value that is not a finite number,
// a value out of its registered range, or a failed check across parameters (asentmax: b + delta > 0).
// An alias is stored as its target (softmax's `theta=T` as beta = 1/T).
Spec parse_spec(std::string_view text);

// Canonical text of a spec: parameters in their declared order, numbers in shortest round-trip form
// (parse_spec(format_spec(s)) == s).
std::string format_spec(const Spec& spec);

// Every registered normaliser name, sorted (for help texts and error messages).
std::vector<std::string> normaliser_names();

struct NormaliserEntry;
struct LearnableInfo;
namespace detail {
// parse_spec, except that where `learned` is set a learnable parameter may be written `learn`: its
// value is then learned(entry, parameter) and not range-checked (learned_scalars.cpp).
using LearnedValue = std::function<double(const NormaliserEntry&, const LearnableInfo&)>;
Spec parse_spec_text(std::string_view text, const LearnedValue& learned);
}  // namespace detail

}  // namespace sharp::norm

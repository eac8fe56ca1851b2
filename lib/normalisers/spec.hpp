#pragma once
// Normaliser specs (docs/science.md#remedies): `name[:key=value[:key=value]]`, lists
// comma-separated. Parsing validates names, parameter names and ranges up front, so a bad spec is a
// sharp::BadInput (exit status 2) before any work starts.
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sharp::norm {

struct Spec {
  std::string name;                       // canonical name: softmax, adaptive, ssmax, topk, ...
  std::map<std::string, double> params;   // every parameter of `name`, defaults filled in

  double param(const std::string& key) const;   // throws std::out_of_range if absent
  bool operator==(const Spec&) const = default;
};

// Parses one spec. Throws sharp::BadInput naming the problem and what is allowed:
// unknown name or parameter, a repeated or missing parameter, a value that is not a finite number,
// or a value out of range (beta > 0, theta > 0, s > 0, k integer >= 1, 1 < alpha <= 2,
// b >= 0, delta >= 0 with b + delta > 0, gamma finite, q >= 1).
// `theta=T` is stored as beta = 1/T; `argmax` stays its own name (it is topk with k = 1).
Spec parse_spec(std::string_view text);

// Comma-separated list of specs (spaces around items are ignored; an empty item is an error).
std::vector<Spec> parse_spec_list(std::string_view text);

// Canonical text of a spec: parameters in their declared order, numbers in shortest round-trip form
// (parse_spec(format_spec(s)) == s).
std::string format_spec(const Spec& spec);

// Every normaliser name, in the order of the list in docs/science.md#remedies (for help texts and error messages).
const std::vector<std::string>& normaliser_names();

}  // namespace sharp::norm

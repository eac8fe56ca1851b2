#pragma once
// The normaliser registry (docs/architecture.md#adding-a-remedy): one entry per normaliser, written
// beside its class and registered at start-up by a NormaliserRegistration in the same file. Spec
// parsing (spec.hpp), make_normaliser, learned parameters (learned_scalars.hpp), sharp-normalise's
// --list, the --help/--describe text of every --normaliser flag and the tables of
// docs/science.md#remedies all read it: nothing else knows a normaliser by its name.
//
// Registration happens during static initialisation (the library is linked whole, CMakeLists.txt),
// reading afterwards; the registry is not meant to change while a program runs.
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "normalisers/normaliser.hpp"

namespace sharp::norm {

// The allowed values of a parameter: an interval, open or closed at each end, optionally integers.
struct ParameterRange {
  double low = -std::numeric_limits<double>::infinity();
  bool low_inclusive = false;
  double high = std::numeric_limits<double>::infinity();
  bool high_inclusive = false;
  bool integer = false;

  static ParameterRange above(double x) { return {x, false}; }  // x < value
  static ParameterRange at_least(double x) { return {x, true}; }  // x <= value
  static ParameterRange finite() { return {}; }  // any finite value
  static ParameterRange integer_at_least(double x) {
    return {x, true, std::numeric_limits<double>::infinity(), false, true};
  }
  ParameterRange& at_most(double x) {
    high = x;
    high_inclusive = true;
    return *this;
  }

  // Finite values only; integers also at most 9e15 (exact in a double).
  bool contains(double x) const;
  // For messages and docs: "beta > 0", "1 < alpha <= 2", "k an integer >= 1", "gamma finite".
  std::string text(const std::string& key) const;
};

// One parameter of a spec (`name:key=value`), in the order format_spec writes them.
struct ParameterInfo {
  std::string key{};
  std::optional<double> default_value{};  // none: the spec must give it
  ParameterRange range{};
  std::string meaning{};  // a few words for --list and the docs table
};

// Another key that sets a parameter, e.g. softmax's theta=T for beta = 1/T.
struct ParameterAlias {
  std::string key{};
  std::string target{};  // the ParameterInfo key it sets
  ParameterRange range{};  // of the alias's own value
  std::function<double(double)> to_target{};
};

// A parameter trainers learn when a spec says `key=learn` (docs/science.md#learned-scalars): the
// model holds an unconstrained raw value per head, the spec gets value(raw), and the gradient
// reaches raw through derivative(raw) = d value / d raw.
struct LearnableInfo {
  std::string key{};
  // Shape of what the model learns per head: {} is one raw scalar c; {"d_model"} is a per-query
  // readout (docs/science.md#asentmax), a scalar c and a vector w of d_model values, so that the
  // query row with hidden state h_q (the attention block's input) has raw = c + w·h_q, and w = 0 is
  // the scalar form. A per-query readout needs a normaliser that takes_row_parameters() and a model
  // with hidden states: the transformer learns it, sharp-train-max refuses it. No other shape is
  // registered (std::logic_error).
  std::vector<std::string> shape{};
  std::string parameterisation{};  // docs text, e.g. "α = 1.01 + 0.99·sigmoid(a), in (1.01, 2)"
  std::string start{};  // docs text, e.g. "a₀ = 0 (α₀ = 1.505)"
  std::function<double(std::size_t train_length)>
      initial_raw{};  // c's start (w starts at 0); may throw sharp::BadInput
  std::function<double(double raw)> value{};
  std::function<double(double raw)> derivative{};

  bool per_query() const { return !shape.empty(); }
};

struct NormaliserEntry {
  std::string name{};  // the spec's name: lower case letters, digits, '_'
  std::string formula{};  // one line: what it computes, e.g. "p = softmax(β·z)"
  std::string section{};  // its docs/science.md anchor, e.g. "temperature"
  std::string example{};  // a valid spec, e.g. "softmax:beta=2"
  std::vector<ParameterInfo> parameters{};
  std::vector<ParameterAlias> aliases{};
  std::vector<LearnableInfo> learnable{};
  std::function<void(const Spec&)> check{};  // optional: checks across parameters, throws sharp::BadInput
  std::function<std::unique_ptr<Normaliser>(const Spec&)> make{};  // gets a checked spec

  const ParameterInfo* parameter(std::string_view key) const;  // nullptr if none
  const LearnableInfo* learnable_parameter(std::string_view key) const;
};

// Adds an entry. A repeated, empty or malformed name, a missing factory or an invalid example is a
// std::logic_error (a programming error, reported at start-up).
void register_normaliser(NormaliserEntry entry);

// The registration of one normaliser, a namespace-scope object beside its class:
//   const NormaliserRegistration kRegistration{{.name = "...", ...}};
struct NormaliserRegistration {
  explicit NormaliserRegistration(NormaliserEntry entry) { register_normaliser(std::move(entry)); }
};

// Every registered normaliser, sorted by name.
std::vector<const NormaliserEntry*> normaliser_entries();
// The entry of a name: nullptr if none / sharp::BadInput "unknown normaliser 'x' (allowed: ...)".
const NormaliserEntry* find_normaliser(std::string_view name);
const NormaliserEntry& normaliser_entry(std::string_view name);

// For messages and help texts: "adaptive, argmax, ..." and "asentmax:b, asentmax:gamma, ...,
// asentmax_query:b (per query), ...".
std::string normaliser_names_text();
std::string learnable_parameters_text();

}  // namespace sharp::norm

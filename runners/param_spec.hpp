#pragma once
// What an experiment declares about each of its parameters: name, type, default, help and the valid
// range. The runner turns these into flags (--d-model for d_model), config-file keys, --help text,
// validation with one clear error line, and the columns /points/params/<name> of the result file.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runners/value.hpp"

namespace sharp::runner {

struct Point;

// What a comma-separated list of this parameter means.
enum class ListRole {
  GridAxis,  // one grid point per value (the usual)
  SingleValue,  // exactly one value
  InsidePoint,  // the whole list is ONE value, evaluated inside each point (e.g. normalisers compared
  // on the same samples); stored as the items joined by kInPointSeparator
  Derived,  // not set by the user (no flag, no axis): `derive` computes it from the point's other
  // values, e.g. the training normaliser of the model a checkpoint names; stored as a
  // /points/params column like any other, outside the point id and the fingerprint
};
inline constexpr char kInPointSeparator = '+';

// The derived parameter that records which trained model a point scored (model_fingerprint_param,
// runners/result_reader.hpp). The runner writes it into each part as a root attribute too, reruns a
// finished point whose model has changed since, and leaves it out of Point::describe() (64 digits).
inline constexpr const char* kModelFingerprint = "model_fingerprint";

struct ParamSpec {
  std::string name;  // as stored in files, e.g. "d_model"; the flag is --d-model
  ParamType type = ParamType::Real;
  std::string default_value;  // in flag syntax, e.g. "2^1..2^20" or "uniform"
  std::string help;
  std::string allowed;  // human description of the valid range, e.g. "integers >= 1"
  std::vector<std::string> choices;  // Text parameters: the allowed words (empty = any)
  // Returns an error text ("must be > 0") when a single value is invalid.
  std::function<std::optional<std::string>(const Value&)> check;
  // Optional: the text two values share when they mean the same (e.g. a normaliser spec's canonical
  // text with defaults filled, so softmax and softmax:beta=1 are one). A list that gives one value
  // twice is refused, naming both spellings; without it values compare by value (numbers: 0 and -0
  // are one, 16 and 2^4 are one) and text as written.
  std::function<std::string(const Value&)> identity;
  ListRole list = ListRole::GridAxis;
  // Optional: one written item stands for several values, e.g. a training file for every model in
  // it (FILE.h5 -> FILE.h5#ID1, FILE.h5#ID2). Applied to every item of the list (and to the default)
  // before parsing; throws sharp::BadInput with the reason when the item cannot be expanded.
  std::function<std::vector<std::string>(const std::string& item)> expand;

  // ListRole::Derived only: the value from the point's set parameters; throws sharp::BadInput when
  // it cannot be computed (the run is refused before anything is written).
  std::function<Value(const Point&)> derive;

  std::string flag() const;  // "--d-model"

  // The declared maximum (docs/architecture.md#errors-and-exit-codes): a value above it is bad input,
  // exit 2 before anything runs, and --help shows it in `allowed`. Every parameter that sets a run's
  // time or memory (sizes, counts, search ranges) declares one:
  //   integer_param("n", "16", "items", 1).at_most(std::int64_t{1} << 30)
  ParamSpec at_most(Value maximum) const;
};

// Builders with the usual ranges; the `allowed` text is derived from the bound.
ParamSpec integer_param(std::string name, std::string default_value, std::string help, std::int64_t minimum);
ParamSpec real_param(std::string name, std::string default_value, std::string help);
ParamSpec real_param_above(std::string name, std::string default_value, std::string help, double exclusive_minimum);
ParamSpec real_param_at_least(std::string name, std::string default_value, std::string help, double minimum);
ParamSpec text_param(std::string name, std::string default_value, std::string help, std::vector<std::string> choices);
// A text parameter computed per point from the others (ListRole::Derived); `allowed` says from what.
ParamSpec derived_text_param(std::string name, std::string help, std::string derived_from,
                             std::function<Value(const Point&)> derive);

// Which parameters a random stream depends on (besides the seed, always included): a stream keyed
// on (seed, n, logits) gives the same numbers for every δ and θ — common random numbers.
struct StreamSpec {
  std::string name;
  std::vector<std::string> depends_on;
};

}  // namespace sharp::runner

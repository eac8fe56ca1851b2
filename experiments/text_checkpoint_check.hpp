#pragma once
// The checks of a sharp-train-text model that a reader (sharp-eval-text, sharp-transformer-dispersion)
// makes once per --checkpoint value, before any work (docs/architecture.md#errors-and-exit-codes): the
// point's parameters have train-text's types and ranges (text_model_params.hpp: the same maxima, so a
// damaged `layers` of 10^9 is refused, not allocated), describe a valid transformer (heads divide
// d_model, a known scheme, normaliser and algorithms), and every weight tensor is there, of its shape,
// finite and float32. A failure is bad input, exit 2, one line naming the file, the point and the
// problem, where today's readers would fail mid-run with "map::at" or bad_alloc.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/errors.hpp"
#include "experiments/text_checkpoint.hpp"
#include "experiments/text_model_params.hpp"
#include "runners/param_spec.hpp"
#include "runners/result_reader.hpp"
#include "runners/value.hpp"

namespace sharp {

namespace text_checkpoint_detail {

inline bool has_type(const runner::Value& v, runner::ParamType type) {
  switch (type) {
    case runner::ParamType::Integer: return std::holds_alternative<std::int64_t>(v);
    case runner::ParamType::Real: return std::holds_alternative<double>(v);
    case runner::ParamType::Text: return std::holds_alternative<std::string>(v);
  }
  return false;
}

inline std::string type_of(const runner::Value& v) {
  if (std::holds_alternative<std::int64_t>(v)) return "an integer";
  if (std::holds_alternative<double>(v)) return "a real";
  return "text";
}

// Why a stored parameter is not one train-text could have written, or nullopt.
inline std::optional<std::string> parameter_problem(const runner::ParamSpec& spec,
                                                    const std::map<std::string, runner::Value>& params) {
  const auto it = params.find(spec.name);
  if (it == params.end()) return "its parameter '" + spec.name + "' is missing";
  const runner::Value& v = it->second;
  if (!has_type(v, spec.type))
    return "its parameter '" + spec.name + "' is " + type_of(v) + ", not " + runner::type_name(spec.type);
  const std::string shown = "its " + spec.name + " '" + runner::canonical(v) + "' ";
  const std::string allowed = " (allowed: " + spec.allowed + ", as sharp-train-text takes it)";
  if (!spec.choices.empty() &&
      std::find(spec.choices.begin(), spec.choices.end(), std::get<std::string>(v)) == spec.choices.end())
    return shown + "is unknown" + allowed;
  if (spec.check)
    if (auto err = spec.check(v)) return shown + *err + allowed;
  return std::nullopt;
}

}  // namespace text_checkpoint_detail

// Why the point a reference FILE.h5#ID names is no usable text model, or nullopt. Reads its
// parameters, then (only when they are sound) every weight tensor. Throws sharp::BadInput when the
// file or the point cannot be read at all.
inline std::optional<std::string> text_checkpoint_problem(const std::string& reference) {
  const runner::ResultPoint point = runner::open_point_reference(reference, kTextTrainers);
  const std::string what = "is not a usable sharp-train-text model (retrain it, or give another --checkpoint): ";
  const std::map<std::string, runner::Value> params = point.file.params(point.id);
  for (const runner::ParamSpec& spec : text_model_parameters())
    if (auto problem = text_checkpoint_detail::parameter_problem(spec, params)) return what + *problem;
  try {
    const TrainedTextModel m = text_checkpoint_detail::describe(reference, point);
    transformer::params_from_arrays<float>(transformer::make_layout(m.config),
                                           point.file.arrays_with_prefix(point.id, transformer::kParamPrefix));
  } catch (const BadInput& e) {
    return what + e.what();
  } catch (const NumericError& e) {
    return what + e.what();
  }
  return std::nullopt;
}

// The --checkpoint parameter of a reader of text models: FILE.h5 (every model of it) or FILE.h5#ID,
// each model checked by text_checkpoint_problem when the command line is read.
inline runner::ParamSpec text_checkpoint_param(std::string default_value, std::string help) {
  runner::ParamSpec p =
      runner::point_reference_param("checkpoint", std::move(default_value), std::move(help), kTextTrainers);
  p.allowed +=
      "; each model is checked before any work: its parameters within sharp-train-text's ranges, every "
      "weight tensor present, of its shape, finite float32";
  p.check = [check = p.check](const runner::Value& v) -> std::optional<std::string> {
    if (auto err = check(v)) return err;
    try {
      return text_checkpoint_problem(std::get<std::string>(v));
    } catch (const BadInput& e) {
      return std::string("cannot be read: ") + e.what();
    }
  };
  return p;
}

}  // namespace sharp

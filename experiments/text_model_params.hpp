#pragma once
// The parameters that describe a text model (its shape, positional scheme, normaliser and training
// mix), declared once: sharp-train-text takes them as flags and stores them in /points/params, and the
// readers of its models (text_checkpoint_check.hpp) hold a stored model to the same types and ranges,
// so a model file that train-text could not have written is refused with the same maxima.
#include <optional>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "experiments/normaliser_param.hpp"
#include "normalisers/learned_scalars.hpp"
#include "runners/param_spec.hpp"
#include "text/sample.hpp"
#include "text_model/task_mix.hpp"
#include "transformer/config.hpp"

namespace sharp {

// normaliser, positional, algorithms, lengths, trace, layers, heads, d_model, max_length (in this
// order: train-text's first parameters).
inline std::vector<runner::ParamSpec> text_model_parameters() {
  runner::ParamSpec normaliser =
      runner::text_param("normaliser", "softmax", "normaliser of every head, trained in", {});
  normaliser.allowed =
      "a normaliser spec (docs/science.md#remedies), e.g. softmax, adaptive, ssmax:s=learn, entmax15, "
      "asentmax:b=learn:gamma=learn, asentmax_query:b=learn:gamma=learn (per query), stieltjes:q=4";
  normaliser.check = [](const runner::Value& v) -> std::optional<std::string> {
    try {
      norm::parse_learnable_spec(std::get<std::string>(v), 16);
    } catch (const BadInput& e) {
      return std::string("is not a normaliser spec: ") + e.what();
    }
    return std::nullopt;
  };
  normaliser.identity = normaliser_identity;
  runner::ParamSpec algorithms =
      runner::text_param("algorithms", "minimum", "the algorithm mix: names joined by '+'", {});
  algorithms.allowed = "names of " + text::algorithm_names() + " joined by '+' (e.g. minimum+binary_search)";
  algorithms.check = [](const runner::Value& v) -> std::optional<std::string> {
    try {
      text_model::parse_algorithm_mix(std::get<std::string>(v));
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::nullopt;
  };
  runner::ParamSpec lengths =
      runner::text_param("lengths", "4,5,7,9,12,16", "training lengths (one list per model)", {});
  lengths.list = runner::ListRole::InsidePoint;
  lengths.allowed = "integers in 4..1024";
  lengths.check = [](const runner::Value& v) -> std::optional<std::string> {
    try {
      for (int n : text_model::parse_lengths(std::get<std::string>(v)))
        if (n < 4 || n > 1024) return "lengths run from 4 to 1024";
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::nullopt;
  };
  return {
      normaliser,
      runner::text_param("positional", "none", "positional scheme", transformer::positional_names()),
      algorithms,
      lengths,
      runner::text_param("trace", "off", "with the algorithms' traces (initial_trace in the prompt)", {"off", "on"}),
      runner::integer_param("layers", "2", "transformer blocks", 1).at_most(std::int64_t{48}),
      runner::integer_param("heads", "4", "attention heads per block", 1).at_most(std::int64_t{64}),
      runner::integer_param("d_model", "64", "model width (a multiple of heads)", 1).at_most(std::int64_t{4096}),
      runner::integer_param("max_length", "2048", "longest sequence (rows of a learned position table)", 16)
          .at_most(std::int64_t{1} << 16),
  };
}

}  // namespace sharp

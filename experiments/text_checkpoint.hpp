#pragma once
// The trained text models of sharp-eval-text: a --checkpoint value names a point of a sharp-train-text
// result file (FILE.h5 = every model in it, FILE.h5#ID = one), read through the runner's result
// reader; the transformer is rebuilt from the point's parameters (shape, positional scheme,
// normaliser, training mix) and its param.<tensor> arrays (transformer/model_arrays.hpp).
#include <string>
#include <vector>

#include "runners/result_reader.hpp"
#include "text/tokeniser.hpp"
#include "text_model/task_mix.hpp"
#include "transformer/layout.hpp"
#include "transformer/model_arrays.hpp"

namespace sharp {

inline const std::vector<std::string> kTextTrainers = {"train-text"};

struct TrainedTextModel {
  std::string name;  // FILE.h5#ID
  transformer::TransformerConfig config;
  std::vector<float> params;
  text_model::TaskMix mix;  // what it was trained on
  std::int64_t seed = 0;  // its training seed (the seed of its point)
};

namespace text_checkpoint_detail {
inline TrainedTextModel describe(const std::string& reference, const runner::ResultPoint& point) {
  const auto params = point.file.params(point.id);
  auto integer = [&](const char* name) { return std::size_t(std::get<std::int64_t>(params.at(name))); };
  auto text = [&](const char* name) { return std::get<std::string>(params.at(name)); };
  TrainedTextModel m;
  m.name = reference;
  m.config.layers = integer("layers");
  m.config.heads = integer("heads");
  m.config.d_model = integer("d_model");
  m.config.vocab = std::size_t(text::vocabulary_size());
  m.config.positional = transformer::parse_positional(text("positional"));
  m.config.normaliser = text("normaliser");
  m.config.max_length = integer("max_length");
  m.config.train_length = m.config.max_length;
  m.mix.algorithms = text_model::parse_algorithm_mix(text("algorithms"));
  m.mix.lengths = text_model::parse_lengths(text("lengths"));
  m.mix.trace = text("trace") == "on";
  m.seed = std::get<std::int64_t>(params.at("seed"));
  return m;
}
}  // namespace text_checkpoint_detail

// The model a reference names without its weights (params stays empty): what a check of the
// point needs (shape, positional scheme, training mix), without reading every tensor.
inline TrainedTextModel load_text_config(const std::string& reference) {
  return text_checkpoint_detail::describe(reference, runner::open_point_reference(reference, kTextTrainers));
}

inline TrainedTextModel load_text_model(const std::string& reference) {
  const runner::ResultPoint point = runner::open_point_reference(reference, kTextTrainers);
  TrainedTextModel m = text_checkpoint_detail::describe(reference, point);
  m.params = transformer::params_from_arrays<float>(transformer::make_layout(m.config),
                                                    point.file.arrays_with_prefix(point.id, transformer::kParamPrefix));
  return m;
}

}  // namespace sharp

#pragma once
// The --checkpoint parameter of the experiments that read trained max-retrieval models
// (sharp-eval-max, sharp-fit-adaptive) and the loading of the model a value names. A value is a
// result file of one of the accepted training experiments (every point of it one value of the
// checkpoint axis) or FILE.h5#ID for one model; the file is read through the runner's result reader
// and the model rebuilt by lib/max_retrieval from the point's parameters and param.<tensor> arrays.
#include <string>
#include <vector>

#include "max_retrieval/trained_model.hpp"
#include "runners/param_spec.hpp"
#include "runners/result_reader.hpp"

namespace sharp {

// The experiments whose result files hold max-retrieval models.
inline const std::vector<std::string> kMaxRetrievalTrainers = {"train-max"};

inline runner::ParamSpec checkpoint_param(const std::vector<std::string>& accepted = kMaxRetrievalTrainers,
                                          const std::string& default_value = "results/train-max.h5") {
  return runner::point_reference_param("checkpoint", default_value, "trained models (a training result file)",
                                       accepted);
}

// The training normaliser of the model a reference FILE.h5#ID names (its /points/params/normaliser,
// learned scalars as `learn`), e.g. "ssmax:s=learn". Throws sharp::BadInput like the loader below.
inline std::string max_retrieval_training_normaliser(const std::string& reference,
                                                     const std::vector<std::string>& accepted = kMaxRetrievalTrainers) {
  const runner::ResultPoint point = runner::open_point_reference(reference, accepted);
  return std::get<std::string>(point.file.params(point.id).at("normaliser"));
}

// The model a reference FILE.h5#ID names. Throws sharp::BadInput when the file, the point or a
// tensor is unusable.
inline max_retrieval::TrainedModel load_max_retrieval_model(
    const std::string& reference, const std::vector<std::string>& accepted = kMaxRetrievalTrainers) {
  const runner::ResultPoint point = runner::open_point_reference(reference, accepted);
  const auto params = point.file.params(point.id);
  auto integer = [&](const char* name) { return std::get<std::int64_t>(params.at(name)); };
  max_retrieval::TrainedModelConfig config;
  config.train_normaliser = std::get<std::string>(params.at("normaliser"));
  config.train_n = integer("train_n");
  config.model = {std::size_t(integer("width")), std::size_t(integer("depth")), config.train_normaliser,
                  std::size_t(config.train_n)};
  config.seed = integer("seed");
  return max_retrieval::trained_model(reference, config, point.file.arrays_with_prefix(point.id, "param."));
}

}  // namespace sharp

#pragma once
// A trained max-retrieval model rebuilt from what a result reader returns for one training point
// (runners/result_reader.hpp): its shape and training settings, and its weights as named arrays,
// one per tensor of the layout (float32 values stored as float64, so the round trip is exact).
// Nothing here knows the file's layout; the caller maps the point's parameters and its
// param.<tensor> arrays to these arguments.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/shaped_array.hpp"
#include "max_retrieval/model.hpp"

namespace sharp::max_retrieval {

// The training settings a model carries besides its weights.
struct TrainedModelConfig {
  ModelConfig model;  // width, depth, training normaliser and n (learned scalars' tensors)
  std::string train_normaliser;  // the head's normaliser during training
  std::int64_t train_n = 0, seed = 0;
};

struct TrainedModel {
  std::string name;  // where it came from, for messages ("FILE.h5#ID")
  ModelLayout layout;
  std::vector<float> params;  // [layout.params.size()]
  std::string train_normaliser;  // as written (may say `learn`)
  norm::Spec trained;  // the same with the learned scalars bound: what `trained` evaluates
  std::int64_t train_n = 0, seed = 0;
};

// tensors: tensor name ("psi.0.weight") -> its values in the tensor's shape. Throws sharp::BadInput
// naming `name` for a missing tensor or one of another shape or element type, sharp::NumericError
// for a value that is not a finite float32. Tensors the layout does not have are ignored.
TrainedModel trained_model(const std::string& name, const TrainedModelConfig& config,
                           const std::map<std::string, ShapedArray>& tensors);

}  // namespace sharp::max_retrieval

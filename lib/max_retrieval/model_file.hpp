#pragma once
// Trained models from a merged sharp-train-max result file (schema sharp/1): each point is one
// model; its weights are /arrays/<id>/param.<tensor> (float32 values stored as float64, so the
// round trip is exact) and its shape comes from /points/params/{width,depth}.
#include <cstdint>
#include <string>
#include <vector>

#include "max_retrieval/model.hpp"

namespace sharp::max_retrieval {

struct TrainedModel {
  std::string file, id;
  ModelLayout layout;
  std::vector<float> params;       // [layout.params.size()]
  std::string train_normaliser;    // the head's normaliser during training
  std::int64_t train_n = 0, seed = 0;
};

// Point ids of a complete train-max file, in file order. Throws sharp::BadInput naming the file
// when it is missing, incomplete, of another schema or experiment.
std::vector<std::string> trained_model_ids(const std::string& path);

// One model (id = a point id of the file). Throws sharp::BadInput for an unknown id or a file
// without weights, sharp::NumericError for weights that are not float32 values.
TrainedModel load_trained_model(const std::string& path, const std::string& id);

}  // namespace sharp::max_retrieval

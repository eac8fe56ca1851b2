#pragma once
// Trained models from a merged sharp-train-max result file (schema sharp/1): each point is one
// model; its weights are /arrays/<id>/param.<tensor> (float32 values stored as float64, so the
// round trip is exact) and its shape comes from /points/params/{width,depth}.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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

// Model references as users write them: "FILE.h5#ID" is one model, "FILE.h5" every model in the
// file (the checkpoint axis of sharp-eval-max and sharp-fit-adaptive).
// "FILE.h5#ID" -> {FILE.h5, ID} (ID empty without '#').
std::pair<std::string, std::string> split_model_reference(const std::string& reference);
// FILE.h5 -> {FILE.h5#ID, ...} in file order; a reference with '#' is returned as it is. Throws
// sharp::BadInput ("cannot be read: ...") when FILE.h5 is not a usable training file.
std::vector<std::string> model_references(const std::string& item);
// The model a reference "FILE.h5#ID" names (load_trained_model of its two parts).
TrainedModel load_referenced_model(const std::string& reference);
// Why a reference names no loadable model ("names no model of 'x.h5'", ...), or nothing.
std::optional<std::string> model_reference_error(const std::string& reference);

}  // namespace sharp::max_retrieval

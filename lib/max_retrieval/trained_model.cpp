#include "max_retrieval/trained_model.hpp"

#include <cmath>

#include "core/errors.hpp"

namespace sharp::max_retrieval {

TrainedModel trained_model(const std::string& name, const TrainedModelConfig& config,
                           const std::map<std::string, ShapedArray>& tensors) {
  TrainedModel m;
  m.name = name;
  m.layout = make_model_layout(config.model);
  m.train_normaliser = config.train_normaliser;
  m.train_n = config.train_n;
  m.seed = config.seed;
  m.params.resize(m.layout.params.size());
  for (const nn::TensorInfo& t : m.layout.params.tensors()) {
    const auto it = tensors.find(t.name);
    if (it == tensors.end()) throw BadInput("model '" + name + "' lacks tensor " + t.name);
    const auto* values = std::get_if<std::vector<double>>(&it->second.data);
    if (!values) throw BadInput("tensor " + t.name + " of model '" + name + "' holds integers, not weights");
    if (it->second.shape != t.shape || values->size() != t.size())
      throw BadInput("tensor " + t.name + " of model '" + name + "' has the wrong shape");
    for (std::size_t j = 0; j < values->size(); ++j) {
      const float v = float((*values)[j]);
      if (double(v) != (*values)[j] || !std::isfinite(v))
        throw NumericError("tensor " + t.name + " of model '" + name + "' holds a value that is not a finite float32");
      m.params[t.offset + j] = v;
    }
  }
  m.trained = bound_normaliser_spec(m.layout, m.params.data());
  return m;
}

}  // namespace sharp::max_retrieval

#include "transformer/model_arrays.hpp"

#include <cmath>

#include "core/errors.hpp"

namespace sharp::transformer {
namespace {

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

template <class T>
NamedArrays model_arrays(const TransformerLayout& layout, const T* params) {
  NamedArrays out;
  for (const nn::TensorInfo& t : layout.params.tensors()) {
    NamedArray& a = out[kParamPrefix + t.name];
    a.shape = t.shape;
    a.values.assign(params + t.offset, params + t.offset + t.size());
  }
  return out;
}

template <class T>
std::vector<T> params_from_arrays(const TransformerLayout& layout, const NamedArrays& arrays) {
  std::vector<T> params(layout.params.size());
  for (const nn::TensorInfo& t : layout.params.tensors()) {
    const std::string name = kParamPrefix + t.name;
    const auto it = arrays.find(name);
    if (it == arrays.end()) throw BadInput("model arrays: no tensor '" + name + "'");
    const NamedArray& a = it->second;
    if (a.shape != t.shape || a.values.size() != t.size())
      throw BadInput("model arrays: tensor '" + name + "' has shape " + shape_text(a.shape) + ", the model needs " +
                     shape_text(t.shape));
    for (std::size_t j = 0; j < t.size(); ++j) {
      const double v = a.values[j];
      if (!std::isfinite(v) || (sizeof(T) == sizeof(float) && double(float(v)) != v))
        throw NumericError("model arrays: value " + std::to_string(j) + " of '" + name + "' (" + std::to_string(v) +
                           ") is not a finite " + (sizeof(T) == sizeof(float) ? "float32" : "double") + " value");
      params[t.offset + j] = T(v);
    }
  }
  return params;
}

template NamedArrays model_arrays<float>(const TransformerLayout&, const float*);
template NamedArrays model_arrays<double>(const TransformerLayout&, const double*);
template std::vector<float> params_from_arrays<float>(const TransformerLayout&, const NamedArrays&);
template std::vector<double> params_from_arrays<double>(const TransformerLayout&, const NamedArrays&);

}  // namespace sharp::transformer

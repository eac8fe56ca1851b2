#include "transformer/model_arrays.hpp"

#include <cmath>
#include <cstdint>
#include <variant>

#include "core/errors.hpp"

namespace sharp::transformer {
namespace {

std::string shape_text(const std::vector<std::size_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<double> values_of(const ShapedArray& a) {
  if (const auto* d = std::get_if<std::vector<double>>(&a.data)) return *d;
  const auto& i = std::get<std::vector<std::int64_t>>(a.data);
  return std::vector<double>(i.begin(), i.end());
}

}  // namespace

template <class T>
std::map<std::string, ShapedArray> model_arrays(const TransformerLayout& layout, const T* params) {
  std::map<std::string, ShapedArray> out;
  for (const nn::TensorInfo& t : layout.params.tensors())
    out[kParamPrefix + t.name] =
        ShapedArray{t.shape, std::vector<double>(params + t.offset, params + t.offset + t.size())};
  return out;
}

template <class T>
std::vector<T> params_from_arrays(const TransformerLayout& layout, const std::map<std::string, ShapedArray>& tensors) {
  // Every tensor present with its shape before the buffer is sized: a layout described by a damaged
  // file (layers 10^9) must be refused, not allocated.
  for (const nn::TensorInfo& t : layout.params.tensors()) {
    const auto it = tensors.find(t.name);
    if (it == tensors.end()) throw BadInput("model arrays: no tensor '" + kParamPrefix + t.name + "'");
    const std::size_t count = std::visit([](const auto& v) { return v.size(); }, it->second.data);
    if (it->second.shape != t.shape || count != t.size())
      throw BadInput("model arrays: tensor '" + kParamPrefix + t.name + "' has shape " + shape_text(it->second.shape) +
                     ", the model needs " + shape_text(t.shape));
  }
  std::vector<T> params(layout.params.size());
  for (const nn::TensorInfo& t : layout.params.tensors()) {
    const std::vector<double> values = values_of(tensors.at(t.name));
    for (std::size_t j = 0; j < t.size(); ++j) {
      const double v = values[j];
      if (!std::isfinite(v) || (sizeof(T) == sizeof(float) && double(float(v)) != v))
        throw NumericError("model arrays: value " + std::to_string(j) + " of '" + kParamPrefix + t.name + "' (" +
                           std::to_string(v) + ") is not a finite " +
                           (sizeof(T) == sizeof(float) ? "float32" : "double") + " value");
      params[t.offset + j] = T(v);
    }
  }
  return params;
}

template std::map<std::string, ShapedArray> model_arrays<float>(const TransformerLayout&, const float*);
template std::map<std::string, ShapedArray> model_arrays<double>(const TransformerLayout&, const double*);
template std::vector<float> params_from_arrays<float>(const TransformerLayout&,
                                                      const std::map<std::string, ShapedArray>&);
template std::vector<double> params_from_arrays<double>(const TransformerLayout&,
                                                        const std::map<std::string, ShapedArray>&);

}  // namespace sharp::transformer

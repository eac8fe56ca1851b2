#pragma once
// A model's weights as named arrays (core/shaped_array.hpp), the form result files store them in
// (/arrays/<id>/param.<tensor>, values in double: float32 weights round-trip exactly) and the result
// reader returns them.
#include <map>
#include <string>
#include <vector>

#include "core/shaped_array.hpp"
#include "transformer/layout.hpp"

namespace sharp::transformer {

inline const std::string kParamPrefix = "param.";

// "param.<tensor>" -> the tensor (layout.hpp names and shapes), for a result record.
template <class T>
std::map<std::string, ShapedArray> model_arrays(const TransformerLayout& layout, const T* params);

// The flat parameter buffer of `layout` from arrays keyed by tensor name WITHOUT the prefix — what
// ResultFile::arrays_with_prefix(id, kParamPrefix) returns; other names are ignored. Throws
// sharp::BadInput naming the tensor when one is missing or has another shape, and sharp::NumericError
// when a value is not finite or, for T = float, not a float32 value (weights of another model).
template <class T>
std::vector<T> params_from_arrays(const TransformerLayout& layout, const std::map<std::string, ShapedArray>& tensors);

}  // namespace sharp::transformer

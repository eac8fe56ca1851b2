#pragma once
// A model's weights as named arrays, the form result files store them in (/arrays/<id>/...) and the
// result reader returns: "param.<tensor>" (layout.hpp names) with the tensor's shape, values in
// double (float32 weights round-trip exactly).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "transformer/layout.hpp"

namespace sharp::transformer {

struct NamedArray {
  std::vector<std::size_t> shape;
  std::vector<double> values;   // row-major, product(shape) values
};
using NamedArrays = std::map<std::string, NamedArray>;

inline const std::string kParamPrefix = "param.";

template <class T>
NamedArrays model_arrays(const TransformerLayout& layout, const T* params);

// The flat parameter buffer of `layout` from named arrays (other names are ignored). Throws
// sharp::BadInput naming the tensor when one is missing or has another shape, and, for T = float,
// sharp::NumericError when a value is not a float32 value (a file written from other weights).
template <class T>
std::vector<T> params_from_arrays(const TransformerLayout& layout, const NamedArrays& arrays);

}  // namespace sharp::transformer

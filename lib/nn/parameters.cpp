#include "nn/parameters.hpp"

#include <cmath>
#include <stdexcept>

#include "rng/counter_rng.hpp"

namespace sharp::nn {

std::size_t TensorInfo::size() const {
  std::size_t s = 1;
  for (std::size_t d : shape) s *= d;
  return s;
}

std::size_t ParameterLayout::add(std::string name, std::vector<std::size_t> shape, std::size_t fan_in) {
  TensorInfo t{std::move(name), std::move(shape), size_, fan_in};
  size_ += t.size();
  tensors_.push_back(std::move(t));
  return tensors_.back().offset;
}

const TensorInfo& ParameterLayout::find(const std::string& name) const {
  for (const TensorInfo& t : tensors_)
    if (t.name == name) return t;
  throw std::out_of_range("no parameter tensor named '" + name + "'");
}

template <class T>
void lecun_normal_init(const ParameterLayout& layout, T* params, std::uint64_t key) {
  for (std::size_t t = 0; t < layout.tensors().size(); ++t) {
    const TensorInfo& info = layout.tensors()[t];
    T* p = params + info.offset;
    if (info.fan_in == 0) {
      for (std::size_t j = 0; j < info.size(); ++j) p[j] = T(0);
      continue;
    }
    const double scale = 1.0 / std::sqrt(double(info.fan_in));
    const std::uint64_t tensor_key = rng::child_key(key, t);
    for (std::size_t j = 0; j < info.size(); ++j) p[j] = T(scale * rng::normal(tensor_key, j));
  }
}

template void lecun_normal_init<float>(const ParameterLayout&, float*, std::uint64_t);
template void lecun_normal_init<double>(const ParameterLayout&, double*, std::uint64_t);

}  // namespace sharp::nn

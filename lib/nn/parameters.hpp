#pragma once
// Named parameter tensors packed into one flat buffer, so that the optimizer, gradient clipping,
// chunk-gradient reduction and checkpoints each see a single array. A layer finds its tensors by
// offset; a buffer of layout.size() values (float for training, double for gradient checks) holds
// all of them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sharp::nn {

struct TensorInfo {
  std::string name;  // e.g. "psi.0.weight"
  std::vector<std::size_t> shape;  // row-major
  std::size_t offset = 0;  // into the flat buffer
  std::size_t fan_in = 0;  // inputs per output unit (LeCun scale); 0 = initialised to zero
  std::size_t size() const;
};

class ParameterLayout {
 public:
  // Appends a tensor and returns its offset. fan_in = 0 marks a tensor initialised to zero (biases).
  std::size_t add(std::string name, std::vector<std::size_t> shape, std::size_t fan_in);
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo& find(const std::string& name) const;  // throws std::out_of_range
  std::size_t size() const { return size_; }  // total number of values

 private:
  std::vector<TensorInfo> tensors_;
  std::size_t size_ = 0;
};

// LeCun-normal initialisation (docs/science.md#max-retrieval-reconstructed): weights ~ N(0, 1/fan_in), biases 0. Value j of tensor t is
// a pure function of (key, t, j): rng::normal(rng::child_key(key, t), j).
template <class T>
void lecun_normal_init(const ParameterLayout& layout, T* params, std::uint64_t key);

}  // namespace sharp::nn

#pragma once
// A row-major array of reals or integers with its shape: one named array of a result file
// (/arrays/<point id>/<name>), as the runner writes it and its reader returns it. In lib/ so that
// model loaders can take what the reader returns without knowing the file's layout.
#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

namespace sharp {

struct ShapedArray {
  std::vector<std::size_t> shape;  // row-major
  std::variant<std::vector<double>, std::vector<std::int64_t>> data;
};

}  // namespace sharp

#include "head_measure/row_recorder.hpp"

#include <algorithm>
#include <cmath>

namespace sharp::head_measure {

RowRecorder::RowRecorder(std::size_t batch, std::size_t layers, std::size_t heads, std::size_t length)
    : batch_(batch),
      layers_(layers),
      heads_(heads),
      length_(length),
      rows_(batch * layers * heads * length),
      input_norms_(layers * batch * length, -1.0) {
  // keys = 0 marks a row not observed yet (every observed row has k >= 1).
}

template <class T>
void RowRecorder::keep(const transformer::AttentionTile<T>& tile) {
  for (std::size_t r = 0; r < tile.rows; ++r)
    rows_[((tile.sequence * layers_ + tile.layer) * heads_ + tile.head) * length_ + tile.first_row + r] = tile.stats[r];
}

template <class T>
void RowRecorder::keep(const transformer::LayerInputChunk<T>& chunk) {
  for (std::size_t r = 0; r < chunk.rows; ++r) {
    double sum = 0.0;
    for (std::size_t j = 0; j < chunk.width; ++j) {
      const double v = double(chunk.values[r * chunk.width + j]);
      sum += v * v;
    }
    input_norms_[chunk.layer * batch_ * length_ + chunk.first_row + r] = std::sqrt(sum);
  }
}

void RowRecorder::observe(const transformer::AttentionTile<float>& tile) { keep(tile); }
void RowRecorder::observe(const transformer::AttentionTile<double>& tile) { keep(tile); }
void RowRecorder::observe_input(const transformer::LayerInputChunk<float>& chunk) { keep(chunk); }
void RowRecorder::observe_input(const transformer::LayerInputChunk<double>& chunk) { keep(chunk); }

double RowRecorder::input_norm_max(std::size_t layer) const {
  const auto first = input_norms_.begin() + std::ptrdiff_t(layer * batch_ * length_);
  return *std::max_element(first, first + std::ptrdiff_t(batch_ * length_));
}

std::size_t RowRecorder::missing_rows() const {
  std::size_t missing = 0;
  for (const AttentionRowStats& s : rows_) missing += s.keys == 0;
  for (double v : input_norms_) missing += v < 0.0;
  return missing;
}

}  // namespace sharp::head_measure

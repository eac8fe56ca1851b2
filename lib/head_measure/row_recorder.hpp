#pragma once
// Keeps what a forward pass shows an AttentionObserver (lib/transformer/observer.hpp) for measuring
// heads (docs/science.md#measuring-heads): every query row's statistics and, per layer, the norm of
// every attention input row (for the weight-norm bound). Each row has its own slot, so concurrent
// tiles never share one and the result does not depend on the thread count.
// Shapes: rows [batch, layers, heads, length] (64 bytes each: 64 MB for 16 heads at n = 2^16),
// input norms [layers, batch·length].
#include <cstddef>
#include <vector>

#include "transformer/observer.hpp"

namespace sharp::head_measure {

using transformer::AttentionRowStats;

class RowRecorder final : public transformer::AttentionObserver {
 public:
  RowRecorder(std::size_t batch, std::size_t layers, std::size_t heads, std::size_t length);

  void observe(const transformer::AttentionTile<float>& tile) override;
  void observe(const transformer::AttentionTile<double>& tile) override;
  void observe_input(const transformer::LayerInputChunk<float>& chunk) override;
  void observe_input(const transformer::LayerInputChunk<double>& chunk) override;

  std::size_t batch() const { return batch_; }
  std::size_t layers() const { return layers_; }
  std::size_t heads() const { return heads_; }
  std::size_t length() const { return length_; }
  const AttentionRowStats& row(std::size_t sequence, std::size_t layer, std::size_t head, std::size_t i) const {
    return rows_[((sequence * layers_ + layer) * heads_ + head) * length_ + i];
  }
  // Largest Euclidean norm of an attention input row of `layer` over every sequence and position.
  double input_norm_max(std::size_t layer) const;
  // Rows never observed (0 after a complete forward pass).
  std::size_t missing_rows() const;

 private:
  template <class T>
  void keep(const transformer::AttentionTile<T>& tile);
  template <class T>
  void keep(const transformer::LayerInputChunk<T>& chunk);

  std::size_t batch_, layers_, heads_, length_;
  std::vector<AttentionRowStats> rows_;
  std::vector<double> input_norms_;
};

}  // namespace sharp::head_measure

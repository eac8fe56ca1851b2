#pragma once
// Per-head statistics of the rows that write an answer (docs/science.md#measuring-heads), observed
// during greedy decoding with the key/value cache (transformer/decoder.hpp: one one-row tile per
// pushed token and head). The rows at positions >= first_row — the last question token and every
// generated token that was pushed, whose outputs predict the answer's tokens — are summed per
// (layer, head): entropy H, the entropy before the normaliser's β (softmax of the same logits: the
// logits' own sharpness, told apart from the multiplier), logit spread δ_row = max − min of the
// row's scaled, masked logits, and ln k (uniform attention's entropy over the row's k keys). Earlier
// rows are ignored.
// Shapes: every per-head vector is [layers · heads], head h of layer l at l·heads + h.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "transformer/observer.hpp"

namespace sharp::head_measure {

class AnswerRows final : public transformer::AttentionObserver {
 public:
  AnswerRows(std::size_t layers, std::size_t heads, std::size_t first_row);

  void observe(const transformer::AttentionTile<float>& tile) override;
  void observe(const transformer::AttentionTile<double>& tile) override;

  // Adds the rows of another summary of the same shape (its own first_row): samples are merged
  // one after another in a fixed order, so the sums do not depend on the thread count.
  void merge(const AnswerRows& other);

  std::size_t layers() const { return layers_; }
  std::size_t heads() const { return heads_; }
  std::int64_t rows() const;  // rows per head (the same for every head)
  std::vector<double> entropy_mean() const;  // [layers · heads] nats; NaN without rows
  std::vector<double> entropy_before_beta_mean() const;  // [layers · heads] nats; NaN without rows
  std::vector<double> delta_mean() const;  // [layers · heads] logit units; NaN without rows
  std::vector<double> delta_max() const;  // [layers · heads] logit units; NaN without rows
  double ln_k_mean() const;  // mean ln k over the rows of head 0; NaN without rows

 private:
  template <class T>
  void keep(const transformer::AttentionTile<T>& tile);

  std::size_t layers_, heads_, first_row_;
  std::vector<double> entropy_sum_, entropy_before_beta_sum_, delta_sum_, delta_max_, ln_k_sum_;
  std::vector<std::int64_t> rows_;
};

}  // namespace sharp::head_measure

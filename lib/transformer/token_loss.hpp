#pragma once
// Token cross-entropy over the vocabulary: per row, ln Σ_c exp(logit_c) − logit_target (stable
// log-sum-exp in double). A target of −1 is ignored (prompt tokens, pads): no loss, zero gradient.
// Shapes: logits, dlogits [rows, vocab]; targets [rows] in [−1, vocab).
#include <cstddef>
#include <cstdint>

namespace sharp::transformer {

inline constexpr std::int32_t kIgnoreTarget = -1;

struct TokenLoss {
  double loss_sum = 0.0;  // Σ over counted rows, rows in index order
  std::int64_t count = 0;  // rows with a target
  std::int64_t correct = 0;  // counted rows whose argmax logit (lowest index on ties) is the target
};

// dlogits (nullptr: not computed) = scale·(softmax(logits) − onehot(target)) on counted rows, 0 on
// ignored rows. Throws sharp::BadInput for a target out of range, sharp::NumericError for a
// non-finite logit.
template <class T>
TokenLoss token_cross_entropy(T* dlogits, const T* logits, const std::int32_t* targets, std::size_t rows,
                              std::size_t vocab, double scale);

}  // namespace sharp::transformer

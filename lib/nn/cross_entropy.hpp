#pragma once
// Softmax cross-entropy over class logits.
// Shapes: logits, probs, dlogits [rows, classes]; labels [rows] in [0, classes).
// Per row: loss = log Σ_c exp(logit_c) − logit_label (stable log-sum-exp in double).
#include <cstddef>
#include <cstdint>

namespace sharp::nn {

struct CrossEntropyTotals {
  double loss_sum = 0.0;  // Σ over rows of the loss (rows in index order)
  std::int64_t correct = 0;  // rows whose argmax logit (lowest index on ties) is the label
};

// Writes probs = softmax(logits) for the backward. Throws sharp::NumericError on a non-finite logit
// and sharp::BadInput on a label out of range.
template <class T>
CrossEntropyTotals cross_entropy_forward(T* probs, const T* logits, const std::int32_t* labels, std::size_t rows,
                                         std::size_t classes);

// dlogits = scale · (probs − onehot(label)), scale = dL/d(loss of a row), e.g. 1/batch for a batch mean.
template <class T>
void cross_entropy_backward(T* dlogits, const T* probs, const std::int32_t* labels, std::size_t rows,
                            std::size_t classes, double scale);

}  // namespace sharp::nn

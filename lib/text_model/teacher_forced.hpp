#pragma once
// Teacher-forced scores of a text model on samples (docs/science.md#algorithmic-text): the mean
// cross-entropy of the answer tokens, the fraction of answer tokens whose argmax is right, and the
// fraction of samples whose every answer token is right. The last equals greedy decoding's
// exact match of the whole answer (greedy reproduces the answer iff each next token, given the
// right prefix, is the argmax), at the cost of one forward pass. Deterministic for any thread count.
#include <vector>

#include "text/sample.hpp"
#include "transformer/model.hpp"

namespace sharp::text_model {

struct TeacherForcedScore {
  double loss = 0.0;  // mean over answer tokens, nats
  double token_accuracy = 0.0;  // fraction of answer tokens
  double exact_match = 0.0;  // fraction of samples
  std::vector<std::int64_t> correct;  // per sample: 1 when every answer token is right
};

TeacherForcedScore teacher_forced_score(const transformer::Transformer& model, const float* params,
                                        const std::vector<text::Sample>& samples, int threads);

}  // namespace sharp::text_model

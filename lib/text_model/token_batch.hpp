#pragma once
// Samples as a rectangular batch for the transformer trainer: inputs are the text's tokens but the
// last, targets the next token on answer positions only (the loss is on the answer, not the
// prompt) and −1 elsewhere; short rows are padded at the end (newline tokens, target −1: causal
// attention never lets a pad reach an earlier position). Shapes: inputs, targets [batch, length].
#include <cstdint>
#include <vector>

#include "text/sample.hpp"

namespace sharp::text_model {

struct TokenBatch {
  std::vector<std::int32_t> inputs, targets;
  std::size_t batch = 0, length = 0;
  std::int64_t answer_tokens = 0;
  // Per row: first input position whose target is an answer token, and the answer's token count.
  std::vector<std::size_t> answer_start, answer_length;
};

TokenBatch make_token_batch(const std::vector<text::Sample>& samples);

}  // namespace sharp::text_model

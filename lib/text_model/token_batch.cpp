#include "text_model/token_batch.hpp"

#include <algorithm>

#include "text/tokeniser.hpp"
#include "transformer/token_loss.hpp"

namespace sharp::text_model {

TokenBatch make_token_batch(const std::vector<text::Sample>& samples) {
  TokenBatch b;
  b.batch = samples.size();
  std::vector<std::vector<std::int32_t>> rows;
  std::vector<std::size_t> question_tokens;
  for (const text::Sample& s : samples) {
    question_tokens.push_back(text::tokenise(s.question).size());
    rows.push_back(text::tokenise(s.text()));
    b.length = std::max(b.length, rows.back().size() - 1);
  }
  b.inputs.assign(b.batch * b.length, text::newline_token());
  b.targets.assign(b.batch * b.length, transformer::kIgnoreTarget);
  for (std::size_t r = 0; r < b.batch; ++r) {
    const auto& t = rows[r];
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      b.inputs[r * b.length + i] = t[i];
      // Position i predicts token i+1; answer tokens are those from question_tokens on.
      if (i + 1 >= question_tokens[r]) {
        b.targets[r * b.length + i] = t[i + 1];
        ++b.answer_tokens;
      }
    }
    b.answer_start.push_back(question_tokens[r] - 1);
    b.answer_length.push_back(t.size() - question_tokens[r]);
  }
  return b;
}

}  // namespace sharp::text_model

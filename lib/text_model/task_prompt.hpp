#pragma once
// Task prompts of growing size (docs/science.md#measuring-heads): to measure a trained text model's
// heads against prompt length, the prompt (the question of a sample, without its answer) of the most
// keys that still fits a token budget. Its last token is the answer position: the row whose output
// is the answer's first token. Lengths beyond the training lengths are what this is for.
#include <cstdint>
#include <vector>

#include "text/sample.hpp"
#include "text/tokeniser.hpp"

namespace sharp::text_model {

struct TaskPrompt {
  text::Algorithm algorithm{};
  int length = 0;  // keys of the task (the algorithm's length)
  std::vector<text::Token> tokens;  // the question's tokens, [tokens.size() <= budget]
};

// The prompt of sample `index` of stream `seed` at the largest allowed length (text::length_refusal
// empty) whose question fits in `budget` tokens: lengths are tried upwards from 4 and the search stops
// at the first drawn question longer than the budget (questions grow by about 6 tokens a key). Throws
// BadInput when not even the shortest allowed question fits (prompt_budget_refusal says so first).
TaskPrompt longest_prompt(text::Algorithm a, bool trace, std::uint64_t seed, std::uint64_t index, std::size_t budget);

// Empty when every drawn prompt of `a` fits `budget` at some allowed length, whatever the draw (the
// shortest allowed length's whole-sample bound fits), else why not.
std::string prompt_budget_refusal(text::Algorithm a, bool trace, std::size_t budget);

}  // namespace sharp::text_model

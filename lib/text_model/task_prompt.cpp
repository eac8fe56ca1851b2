#include "text_model/task_prompt.hpp"

#include <string>

#include "core/errors.hpp"

namespace sharp::text_model {
namespace {

constexpr int kShortest = 4, kLongest = 1024;  // text::length_refusal's range

int shortest_allowed(text::Algorithm a, bool trace) {
  for (int length = kShortest; length <= kLongest; ++length)
    if (text::length_refusal(a, length, trace).empty()) return length;
  return 0;
}

}  // namespace

std::string prompt_budget_refusal(text::Algorithm a, bool trace, std::size_t budget) {
  const std::string what = std::string(text::algorithm_name(a)) + (trace ? " with trace" : "");
  const int shortest = shortest_allowed(a, trace);
  if (shortest == 0) return what + ": no length may be drawn";
  const int bound = text::token_bound(a, shortest, trace);
  if (std::size_t(bound) > budget)
    return what + ": a prompt at its shortest length (" + std::to_string(shortest) + " keys) may need up to " +
           std::to_string(bound) + " tokens, more than " + std::to_string(budget);
  return {};
}

TaskPrompt longest_prompt(text::Algorithm a, bool trace, std::uint64_t seed, std::uint64_t index, std::size_t budget) {
  TaskPrompt best;
  best.algorithm = a;
  for (int length = kShortest; length <= kLongest; ++length) {
    if (!text::length_refusal(a, length, trace).empty()) continue;
    std::vector<text::Token> tokens = text::tokenise(text::draw_sample(seed, a, length, index, trace).question);
    if (tokens.size() > budget) break;
    best.length = length;
    best.tokens = std::move(tokens);
  }
  if (best.length == 0) {
    const std::string why = prompt_budget_refusal(a, trace, budget);
    throw BadInput(why.empty()
                       ? std::string(text::algorithm_name(a)) + ": no prompt fits " + std::to_string(budget) + " tokens"
                       : why);
  }
  return best;
}

}  // namespace sharp::text_model

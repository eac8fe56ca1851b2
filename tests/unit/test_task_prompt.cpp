// lib/text_model/task_prompt: the prompt of the most keys that fits a token budget is the question
// lib/text draws at that length (its last token the answer position), the next allowed length would
// not fit, sorting traces skip the lengths CLRS-Text never draws, and a budget below the shortest
// prompt is refused.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "text_model/task_prompt.hpp"

namespace {

using namespace sharp;
using text::Algorithm;

TEST(TaskPrompt, MostKeysThatFitTheBudget) {
  for (Algorithm a : {Algorithm::minimum, Algorithm::binary_search, Algorithm::activity_selector,
                      Algorithm::find_maximum_subarray_kadane, Algorithm::quicksort}) {
    for (std::size_t budget : {128u, 300u, 1000u}) {
      for (std::uint64_t index : {0u, 7u}) {
        const text_model::TaskPrompt p = text_model::longest_prompt(a, false, 42, index, budget);
        SCOPED_TRACE(std::string(text::algorithm_name(a)) + " budget " + std::to_string(budget));
        EXPECT_EQ(p.algorithm, a);
        EXPECT_LE(p.tokens.size(), budget);
        EXPECT_EQ(p.tokens, text::tokenise(text::draw_sample(42, a, p.length, index, false).question));
        EXPECT_EQ(p.tokens.back(), text::newline_token());   // the question ends where the answer begins
        // the next length's question no longer fits (or may not be drawn at all)
        const int next = p.length + 1;
        if (text::length_refusal(a, next, false).empty())
          EXPECT_GT(text::tokenise(text::draw_sample(42, a, next, index, false).question).size(), budget);
        if (budget >= 300) EXPECT_GT(p.length, 16);   // past every training length
      }
    }
  }
}

TEST(TaskPrompt, SortingTracesSkipLengthsNeverDrawn) {
  const text_model::TaskPrompt p = text_model::longest_prompt(Algorithm::insertion_sort, true, 1, 0, 2048);
  EXPECT_EQ(p.length, 10);   // traced sorting is drawn only at 4, 5, 10
  const text_model::TaskPrompt q = text_model::longest_prompt(Algorithm::insertion_sort, true, 1, 0, 80);
  EXPECT_TRUE(q.length == 4 || q.length == 5) << q.length;
}

TEST(TaskPrompt, BudgetBelowTheShortestPromptIsRefused) {
  const int bound = text::token_bound(Algorithm::minimum, 4, false);
  EXPECT_TRUE(text_model::prompt_budget_refusal(Algorithm::minimum, false, std::size_t(bound)).empty());
  const std::string why = text_model::prompt_budget_refusal(Algorithm::minimum, false, std::size_t(bound - 1));
  EXPECT_NE(why.find("minimum: a prompt at its shortest length (4 keys)"), std::string::npos) << why;
  EXPECT_THROW(text_model::longest_prompt(Algorithm::minimum, false, 1, 0, 10), BadInput);
}

}  // namespace

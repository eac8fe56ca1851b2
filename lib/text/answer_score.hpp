#pragma once
// Scores a generated answer against the expected one (docs/science.md#algorithmic-text): exact match
// of the whole answer, exact match of the final output (after " | " with a trace), and per-element
// accuracy of the final output, position-wise over the expected elements. A generation without the
// "\n\n" terminator, or whose final output does not parse in the expected form, scores 0 on all.
#include <string>

#include "text/sample.hpp"

namespace sharp::text {

struct AnswerScore {
  bool terminated = false;
  bool exact_answer = false;
  bool exact_final = false;
  int elements_right = 0;
  int elements_expected = 0;
};

// generated: the tokens the model produced after the question, as text (its "\n\n" included).
AnswerScore score_answer(const Sample& expected, const std::string& generated, bool trace);

}  // namespace sharp::text

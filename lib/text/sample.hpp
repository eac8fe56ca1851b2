#pragma once
// One sample of the CLRS-Text format (docs/science.md#clrs-text-format), generated here rather than
// taken from the released data: question = "{algo}:\n{inputs}\n{output names}:\n", answer =
// "{output}\n\n"; with a trace the first state joins the inputs as "initial_trace: ..." and the
// answer is "{h1}, ..., {h_last-1} | {final output}".
// A drawn sample is a pure function of (seed, algorithm, length, index).
#include <cstdint>
#include <string>

#include "text/algorithm.hpp"
#include "text/traces.hpp"

namespace sharp::text {

struct Sample {
  std::string question;
  std::string answer;  // ends with "\n\n"
  std::string final_output;  // the part of the answer after " | " (the whole answer without a trace), no "\n\n"
  std::string text() const { return question + answer; }
};

// The input of sample `index`: keys U[0,1) (kadane U[-1,1)); binary_search sorted keys and a
// U[0,1) target; activity_selector s = min(u1,u2), f = max(u1,u2); max_value priorities and values
// U[0,1); every value truncated to 3 decimals after it is drawn (and after sorting, min and max), as
// CLRS's sampler does.
TaskInput draw_input(std::uint64_t seed, Algorithm a, int length, std::uint64_t index);

// Formats one input (drawn or given) as a sample. Throws BadInput for a trace of an algorithm that
// has none (max_value) and for an input that does not fit the algorithm.
Sample render(Algorithm a, const TaskInput& input, bool trace);

inline Sample draw_sample(std::uint64_t seed, Algorithm a, int length, std::uint64_t index, bool trace) {
  return render(a, draw_input(seed, a, length, index), trace);
}

// Samples longer than this many tokens are never drawn.
inline constexpr int kMaxSampleTokens = 2048;
// CLRS-Text draws the quadratic (sorting) traces only at these lengths.
inline constexpr int kQuadraticTraceLengths[] = {4, 5, 10};

// An upper bound on a sample's token count at this length (every number at its widest, the most
// states the algorithm can record), so that whether a length is allowed does not depend on the draw.
// Any length >= 1 (a given input's key count); saturates at INT_MAX rather than overflow.
int token_bound(Algorithm a, int length, bool trace);
// Empty when (algorithm, length, trace) may be drawn, else the reason it may not: length < 4 or
// > 1024, a trace of an algorithm without one, a sorting trace at a length outside
// kQuadraticTraceLengths, or token_bound > kMaxSampleTokens.
std::string length_refusal(Algorithm a, int length, bool trace);

// The largest input position the expected final output names (minimum: the answer's index;
// kadane: its end; a pair trace's (low, high): high), or -1 when the output names none (values,
// masks). A model trained on lengths up to L never wrote an index >= L: docs/science.md#algorithmic-text.
int largest_output_index(Algorithm a, const Sample& sample);

}  // namespace sharp::text

#pragma once
// CLRS traces: runs one algorithm on one input with CLRS's instrumentation (docs/science.md#clrs-text-format):
// the hint states it records, already formatted as the text prints them, and the final output.
// Ties follow CLRS: stable sorts (insertion, bubble) keep input order, minimum takes the first
// index, binary_search the first key >= target, activity_selector orders by finish time stably,
// max_value (ours) takes the first of equal highest priorities and records no states.
#include <string>
#include <vector>

#include "text/algorithm.hpp"
#include "text/milli.hpp"

namespace sharp::text {

// One input. minimum, the sorts and kadane use `key`; binary_search `key` (sorted) and `target`;
// activity_selector `s` and `f` (s[i] <= f[i]); max_value `priority` and `value` (one of each per item).
struct TaskInput {
  std::vector<Milli> key;
  Milli target = 0;
  std::vector<Milli> s, f;
  std::vector<Milli> priority, value;
  int length() const { return static_cast<int>(!key.empty() ? key.size() : !s.empty() ? s.size() : priority.size()); }
};

struct Trace {
  // Every hint state, formatted: states.front() goes to the prompt (initial_trace), states.back()
  // equals the output and is dropped from the answer. Shape: (number of states); empty for an
  // algorithm without a trace (has_trace).
  std::vector<std::string> states;
  std::string output;  // the final output without a trace ("3", "0, 3", "[0.055 0.077 ...]")
};

// Throws BadInput when the input does not fit the algorithm (sizes, an unsorted binary_search key,
// s > f, priorities and values of different counts, length < 2).
Trace run_traced(Algorithm a, const TaskInput& input);

// "[a b c]" with format_milli for each value.
std::string format_array(const std::vector<Milli>& values);

}  // namespace sharp::text

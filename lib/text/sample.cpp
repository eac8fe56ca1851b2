#include "text/sample.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.hpp"
#include "rng/counter_rng.hpp"

namespace sharp::text {
namespace {

std::string input_fields(Algorithm a, const TaskInput& in) {
  switch (a) {
    case Algorithm::binary_search: return "key: " + format_array(in.key) + ", target: " + format_milli(in.target);
    case Algorithm::activity_selector: return "s: " + format_array(in.s) + ", f: " + format_array(in.f);
    case Algorithm::max_value: return "priority: " + format_array(in.priority) + ", value: " + format_array(in.value);
    default: return "key: " + format_array(in.key);
  }
}

std::string output_names(Algorithm a, bool trace) {
  switch (a) {
    case Algorithm::minimum: return "min";
    case Algorithm::binary_search: return trace ? "(low, high)" : "return";
    case Algorithm::find_maximum_subarray_kadane: return trace ? "(best_low, best_high)" : "start, end";
    case Algorithm::activity_selector: return "selected";
    case Algorithm::max_value: return "value";
    default: return "pred";
  }
}

int digits(int x) { return static_cast<int>(std::to_string(std::max(x, 0)).size()); }

}  // namespace

TaskInput draw_input(std::uint64_t seed, Algorithm a, int length, std::uint64_t index) {
  if (length < 2) throw BadInput("a sample needs length >= 2");
  const std::uint64_t key = rng::child_key(
      rng::child_key(rng::child_key(seed, static_cast<std::uint64_t>(a) + 1), static_cast<std::uint64_t>(length)),
      index);
  const auto n = static_cast<std::size_t>(length);
  TaskInput in;
  auto u = [&](std::size_t i) { return rng::uniform(key, i); };
  switch (a) {
    case Algorithm::binary_search: {
      std::vector<double> raw(n);
      for (std::size_t i = 0; i < n; ++i) raw[i] = u(i);
      std::sort(raw.begin(), raw.end());
      for (double x : raw) in.key.push_back(truncate_to_milli(x));
      in.target = truncate_to_milli(u(n));
      break;
    }
    case Algorithm::find_maximum_subarray_kadane:
      for (std::size_t i = 0; i < n; ++i) in.key.push_back(truncate_to_milli(-1.0 + 2.0 * u(i)));
      break;
    case Algorithm::max_value:
      for (std::size_t i = 0; i < n; ++i) {
        in.priority.push_back(truncate_to_milli(u(i)));
        in.value.push_back(truncate_to_milli(u(n + i)));
      }
      break;
    case Algorithm::activity_selector:
      for (std::size_t i = 0; i < n; ++i) {
        const double u1 = u(i), u2 = u(n + i);
        in.s.push_back(truncate_to_milli(std::min(u1, u2)));
        in.f.push_back(truncate_to_milli(std::max(u1, u2)));
      }
      break;
    default:
      for (std::size_t i = 0; i < n; ++i) in.key.push_back(truncate_to_milli(u(i)));
  }
  return in;
}

Sample render(Algorithm a, const TaskInput& input, bool trace) {
  if (trace && !has_trace(a)) throw BadInput(std::string(algorithm_name(a)) + " has no trace: draw it without one");
  const Trace e = run_traced(a, input);
  const std::string name(algorithm_name(a));
  Sample s;
  if (!trace) {
    s.question = name + ":\n" + input_fields(a, input) + "\n" + output_names(a, false) + ":\n";
    s.final_output = e.output;
    s.answer = e.output + "\n\n";
    return s;
  }
  s.question = name + ":\n" + input_fields(a, input) + ", initial_trace: " + e.states.front() + "\n" + "trace | " +
               output_names(a, true) + ":\n";
  // The binary_search and kadane outputs with a trace are their last (low, high) state.
  s.final_output = has_pair_trace(a) ? e.states.back() : e.output;
  std::string middle;
  for (std::size_t i = 1; i + 1 < e.states.size(); ++i) {
    if (i > 1) middle += ", ";
    middle += e.states[i];
  }
  s.answer = middle + " | " + s.final_output + "\n\n";
  return s;
}

int token_bound(Algorithm a, int length, bool trace) {
  // In doubles (exact below 2^53) and saturated: a given input (sharp-text-sample --keys) may have any
  // number of keys, and a sorting trace's states * state overflow an int from a few hundred keys on.
  const double n = length;
  const double number = a == Algorithm::find_maximum_subarray_kadane ? 6 : 5;  // "-0.999", "0.999"
  const double array = 2 + n * number + (n - 1);
  const double name_tokens = 1 + 2;  // algorithm name, ":\n"
  double inputs = 0, state = 0, states = 0, output = 0;
  const double h = std::floor(std::log2(std::max(n, 1.0)));
  const auto bounded = [](double tokens) { return int(std::min(tokens, double(std::numeric_limits<int>::max()))); };
  switch (a) {
    case Algorithm::minimum:
      inputs = 2 + array;
      state = digits(length - 1);
      states = n;
      output = state;
      break;
    case Algorithm::binary_search:
      inputs = 2 + array + 4 + number;
      state = 4 + 2 * digits(length - 1);
      states = h + 3;
      output = state;
      break;
    case Algorithm::find_maximum_subarray_kadane:
      inputs = 2 + array;
      state = 4 + 2 * digits(length - 1);
      states = n;
      output = state;
      break;
    case Algorithm::activity_selector:
      inputs = 2 * (2 + array) + 2;
      state = 2 + n + (n - 1);
      states = n + 1;
      output = state;
      break;
    case Algorithm::insertion_sort:
      inputs = 2 + array;
      state = array;
      states = n;
      output = array;
      break;
    case Algorithm::bubble_sort:
      inputs = 2 + array;
      state = array;
      states = 1 + n * (n - 1) / 2;
      output = array;
      break;
    case Algorithm::heapsort:
      inputs = 2 + array;
      state = array;
      states = 1 + n * (h + 1) + (n - 1) * (h + 2);
      output = array;
      break;
    case Algorithm::quicksort:
      // sorted input is the worst case: partitions of n, n - 1, ..., 2 keys, one state per comparison and pivot swap
      inputs = 2 + array;
      state = array;
      states = n * (n + 1) / 2 - 1;
      output = array;
      break;
    case Algorithm::max_value:  // "priority: [..], value: [..]" and one number; no trace
      return bounded(name_tokens + 3 + array + 5 + array + 1 + 8 + number + 2);
  }
  const double names = 8;  // the output names line, at most 8 tokens ("(best_low, best_high):\n")
  if (!trace) return bounded(name_tokens + inputs + 1 + names + output + 2);
  const double question = name_tokens + inputs + 3 + state + 1 + 4 + names;
  const double answer = states * (state + 2) + 3 + output + 2;
  return bounded(question + answer);
}

std::string length_refusal(Algorithm a, int length, bool trace) {
  const std::string what =
      std::string(algorithm_name(a)) + (trace ? " with trace" : "") + " at length " + std::to_string(length);
  if (length < 4 || length > 1024) return what + ": lengths run from 4 to 1024";
  if (trace && !has_trace(a))
    return what + ": " + std::string(algorithm_name(a)) + " has no trace (draw it without one)";
  if (trace && is_sorting(a) &&
      std::find(std::begin(kQuadraticTraceLengths), std::end(kQuadraticTraceLengths), length) ==
          std::end(kQuadraticTraceLengths)) {
    return what + ": sorting traces are drawn only at lengths 4, 5, 10 (as CLRS-Text does)";
  }
  const int bound = token_bound(a, length, trace);
  if (bound > kMaxSampleTokens) {
    return what + ": up to " + std::to_string(bound) + " tokens, more than the cap of " +
           std::to_string(kMaxSampleTokens);
  }
  return {};
}

int largest_output_index(Algorithm a, const Sample& sample) {
  if (!output_is_index(a)) return -1;
  int largest = -1, current = -1;
  for (char c : sample.final_output + " ") {
    if (c >= '0' && c <= '9') {
      current = (current < 0 ? 0 : current * 10) + (c - '0');
    } else {
      largest = std::max(largest, current);
      current = -1;
    }
  }
  return largest;
}

}  // namespace sharp::text

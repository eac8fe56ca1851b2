#include "text/algorithm.hpp"

#include "core/errors.hpp"

namespace sharp::text {

std::string_view algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::minimum: return "minimum";
    case Algorithm::binary_search: return "binary_search";
    case Algorithm::find_maximum_subarray_kadane: return "find_maximum_subarray_kadane";
    case Algorithm::activity_selector: return "activity_selector";
    case Algorithm::insertion_sort: return "insertion_sort";
    case Algorithm::bubble_sort: return "bubble_sort";
    case Algorithm::heapsort: return "heapsort";
    case Algorithm::quicksort: return "quicksort";
    case Algorithm::max_value: return "max_value";
  }
  return "?";
}

std::string algorithm_names() {
  std::string s;
  for (Algorithm a : kAlgorithms) s += (s.empty() ? "" : ", ") + std::string(algorithm_name(a));
  return s;
}

Algorithm parse_algorithm(std::string_view name) {
  for (Algorithm a : kAlgorithms) {
    if (algorithm_name(a) == name) return a;
  }
  throw BadInput("unknown algorithm '" + std::string(name) + "' (known: " + algorithm_names() + ")");
}

bool is_sorting(Algorithm a) {
  return a == Algorithm::insertion_sort || a == Algorithm::bubble_sort || a == Algorithm::heapsort ||
         a == Algorithm::quicksort;
}

bool has_pair_trace(Algorithm a) {
  return a == Algorithm::binary_search || a == Algorithm::find_maximum_subarray_kadane;
}

bool has_trace(Algorithm a) { return a != Algorithm::max_value; }

bool output_is_index(Algorithm a) {
  return a == Algorithm::minimum || a == Algorithm::binary_search || a == Algorithm::find_maximum_subarray_kadane;
}

}  // namespace sharp::text

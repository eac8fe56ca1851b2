#pragma once
// The algorithms of the CLRS-Text format this suite generates (docs/science.md#clrs-text-format):
// their names as printed, which inputs they take, and whether their trace grows quadratically.
// max_value is this suite's own task in the same grammar (the max-retrieval task as text), not CLRS's.
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace sharp::text {

enum class Algorithm {
  minimum,
  binary_search,
  find_maximum_subarray_kadane,
  activity_selector,
  insertion_sort,
  bubble_sort,
  heapsort,
  quicksort,
  max_value,  // ours: the value of the highest-priority item (appended: the draws of the others keep their keys)
};

inline constexpr std::array<Algorithm, 9> kAlgorithms = {
    Algorithm::minimum,           Algorithm::binary_search,  Algorithm::find_maximum_subarray_kadane,
    Algorithm::activity_selector, Algorithm::insertion_sort, Algorithm::bubble_sort,
    Algorithm::heapsort,          Algorithm::quicksort,      Algorithm::max_value};

// The name printed on the first line of a sample ("heapsort").
std::string_view algorithm_name(Algorithm a);
// Parses a name; throws BadInput listing the known names.
Algorithm parse_algorithm(std::string_view name);
// "minimum, binary_search, ..." for help texts and error messages.
std::string algorithm_names();

// Sorting algorithms print key values as output (and as trace states).
bool is_sorting(Algorithm a);
// binary_search and kadane: states are (low, high) pairs in parentheses.
bool has_pair_trace(Algorithm a);
// Whether the algorithm records hint states at all (max_value does not: it is drawn without traces).
bool has_trace(Algorithm a);
// Whether the final output names input positions (minimum, binary_search, kadane) rather than values
// (the sorts, max_value) or a mask (activity_selector).
bool output_is_index(Algorithm a);

}  // namespace sharp::text

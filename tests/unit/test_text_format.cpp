// The CLRS-Text generator (docs/science.md#clrs-text-format): the published examples character for
// character, every algorithm's final output against an independent implementation on random
// samples, the number format, the tokeniser round trip and the length rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "text/answer_score.hpp"
#include "text/sample.hpp"
#include "text/tokeniser.hpp"

using namespace sharp::text;

namespace {

std::vector<Milli> milli(std::initializer_list<const char*> values) {
  std::vector<Milli> out;
  for (const char* v : values) out.push_back(parse_milli(v));
  return out;
}

TaskInput keys(std::vector<Milli> k, Milli target = 0) {
  TaskInput in;
  in.key = std::move(k);
  in.target = target;
  return in;
}

TaskInput items(std::vector<Milli> priority, std::vector<Milli> value) {
  TaskInput in;
  in.priority = std::move(priority);
  in.value = std::move(value);
  return in;
}

// Independent answers, computed from scratch with other algorithms than lib/text/traces.cpp.
std::string sorted_keys(std::vector<Milli> k) {
  std::sort(k.begin(), k.end());
  return format_array(k);
}
std::string first_minimum(const std::vector<Milli>& k) {
  return std::to_string(std::min_element(k.begin(), k.end()) - k.begin());  // first of equal minima
}
std::string value_of_first_highest(const std::vector<Milli>& priority, const std::vector<Milli>& value) {
  // std::max_element returns the first of equal largest elements.
  return format_milli(value[std::max_element(priority.begin(), priority.end()) - priority.begin()]);
}
std::string first_not_below(const std::vector<Milli>& k, Milli target) {
  const auto i = std::lower_bound(k.begin(), k.end(), target) - k.begin();
  // CLRS keeps the answer inside the array: a target above every key returns the last index.
  return std::to_string(std::min<std::ptrdiff_t>(i, static_cast<std::ptrdiff_t>(k.size()) - 1));
}
// Brute force over all subarrays: the largest sum, then the smallest end, then the smallest start.
std::string best_subarray(const std::vector<Milli>& k) {
  long long best = std::numeric_limits<long long>::min();
  int bl = 0, bh = 0;
  const int n = static_cast<int>(k.size());
  for (int h = 0; h < n; ++h) {
    for (int l = 0; l <= h; ++l) {
      long long sum = 0;
      for (int i = l; i <= h; ++i) sum += k[i];
      if (sum > best) {
        best = sum;
        bl = l;
        bh = h;
      }
    }
  }
  return std::to_string(bl) + ", " + std::to_string(bh);
}
// The most activities that can be chosen without overlap (f of one <= s of the next), by brute force.
int most_activities(const TaskInput& in) {
  const int n = in.length();
  int best = 0;
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    std::vector<int> chosen;
    for (int i = 0; i < n; ++i) {
      if (mask >> i & 1u) chosen.push_back(i);
    }
    std::sort(chosen.begin(), chosen.end(), [&](int a, int b) { return in.f[a] < in.f[b]; });
    bool ok = true;
    for (std::size_t j = 1; j < chosen.size(); ++j) ok = ok && in.s[chosen[j]] >= in.f[chosen[j - 1]];
    if (ok) best = std::max(best, static_cast<int>(chosen.size()));
  }
  return best;
}

}  // namespace

TEST(TextFormat, InsertionSortExample) {
  const Sample s = render(Algorithm::insertion_sort, keys(milli({"0.549", "0.715", "0.603", "0.545", "0.424"})), false);
  EXPECT_EQ(s.text(), "insertion_sort:\nkey: [0.549 0.715 0.603 0.545 0.424]\npred:\n[0.424 0.545 0.549 0.603 0.715]\n\n");
}

TEST(TextFormat, BinarySearchExample) {
  const Sample s = render(Algorithm::binary_search,
                          keys(milli({"0.424", "0.545", "0.549", "0.603", "0.715"}), parse_milli("0.646")), false);
  EXPECT_EQ(s.text(), "binary_search:\nkey: [0.424 0.545 0.549 0.603 0.715], target: 0.646\nreturn:\n4\n\n");
}

TEST(TextFormat, HeapsortTraceExampleOf21States) {
  const Sample s = render(Algorithm::heapsort, keys(milli({"0.077", "0.512", "0.713", "0.055", "0.905", "0.639"})), true);
  const std::string expected =
      "heapsort:\nkey: [0.077 0.512 0.713 0.055 0.905 0.639], initial_trace: [0.077 0.512 0.713 0.055 0.905 0.639]\n"
      "trace | pred:\n"
      "[0.077 0.512 0.713 0.055 0.905 0.639], [0.077 0.512 0.713 0.055 0.905 0.639], [0.077 0.512 0.713 0.055 0.905 0.639], "
      "[0.077 0.512 0.713 0.055 0.905 0.639], [0.077 0.905 0.713 0.055 0.512 0.639], [0.077 0.905 0.713 0.055 0.512 0.639], "
      "[0.905 0.077 0.713 0.055 0.512 0.639], [0.905 0.512 0.713 0.055 0.077 0.639], [0.905 0.512 0.713 0.055 0.077 0.639], "
      "[0.639 0.512 0.713 0.055 0.077 0.905], [0.713 0.512 0.639 0.055 0.077 0.905], [0.713 0.512 0.639 0.055 0.077 0.905], "
      "[0.077 0.512 0.639 0.055 0.713 0.905], [0.639 0.512 0.077 0.055 0.713 0.905], [0.639 0.512 0.077 0.055 0.713 0.905], "
      "[0.055 0.512 0.077 0.639 0.713 0.905], [0.512 0.055 0.077 0.639 0.713 0.905], [0.512 0.055 0.077 0.639 0.713 0.905], "
      "[0.077 0.055 0.512 0.639 0.713 0.905], [0.077 0.055 0.512 0.639 0.713 0.905], [0.055 0.077 0.512 0.639 0.713 0.905]"
      " | [0.055 0.077 0.512 0.639 0.713 0.905]\n\n";
  EXPECT_EQ(s.text(), expected);
}

// Worked by hand from CLRS's quicksort (Lomuto partition; a hint after every comparison and after
// the pivot swap, none before the first comparison). Keys 0.5 0.2 0.9 0.1, pivot 0.1: j = 0, 1, 2
// compare without swapping (3 states, the first is the initial_trace), the pivot swap gives
// [0.1 0.2 0.9 0.5]; then the range 1..3 with pivot 0.5: j = 1 (0.2 <= 0.5 swaps with itself),
// j = 2 (0.9 stays), the pivot swap gives the sorted array (the last state, dropped). 7 states.
TEST(TextFormat, QuicksortTraceExampleOf7States) {
  const Sample s = render(Algorithm::quicksort, keys(milli({"0.5", "0.2", "0.9", "0.1"})), true);
  EXPECT_EQ(s.text(),
            "quicksort:\nkey: [0.5 0.2 0.9 0.1], initial_trace: [0.5 0.2 0.9 0.1]\ntrace | pred:\n"
            "[0.5 0.2 0.9 0.1], [0.5 0.2 0.9 0.1], [0.1 0.2 0.9 0.5], [0.1 0.2 0.9 0.5], [0.1 0.2 0.9 0.5]"
            " | [0.1 0.2 0.5 0.9]\n\n");
  // Sorted keys give the longest trace (token_bound's count): partitions of 4, 3 and 2 keys, 4 + 3 + 2
  // states; the answer shows the 7 between the first and the last, then the output.
  const Sample sorted = render(Algorithm::quicksort, keys(milli({"0.1", "0.2", "0.3", "0.4"})), true);
  EXPECT_EQ(std::count(sorted.answer.begin(), sorted.answer.end(), '['), 7 + 1);
}

TEST(TextFormat, PairTracesEndWithTheirLastStateInParentheses) {
  const Sample s = render(Algorithm::binary_search,
                          keys(milli({"0.424", "0.545", "0.549", "0.603", "0.715"}), parse_milli("0.646")), true);
  EXPECT_EQ(s.text(),
            "binary_search:\nkey: [0.424 0.545 0.549 0.603 0.715], target: 0.646, initial_trace: (0, 4)\n"
            "trace | (low, high):\n(3, 4) | (4, 4)\n\n");
  EXPECT_EQ(s.final_output, "(4, 4)");
  const Sample k = render(Algorithm::find_maximum_subarray_kadane, keys(milli({"0.098", "0.43", "0.206", "0.09", "-0.153"})), false);
  EXPECT_EQ(k.text(), "find_maximum_subarray_kadane:\nkey: [0.098 0.43 0.206 0.09 -0.153]\nstart, end:\n0, 3\n\n");
}

// max_value (ours, docs/science.md#clrs-text-format): records written out by hand.
TEST(TextFormat, MaxValueHandCheckedRecords) {
  EXPECT_EQ(render(Algorithm::max_value, items(milli({"0.3", "0.9", "0.1"}), milli({"0.417", "0.2", "0.5"})), false).text(),
            "max_value:\npriority: [0.3 0.9 0.1], value: [0.417 0.2 0.5]\nvalue:\n0.2\n\n");
  // A tie of the highest priority (0.8 at 1 and 3) goes to the lower index: 0.25, not 0.75.
  EXPECT_EQ(render(Algorithm::max_value, items(milli({"0.5", "0.8", "0.1", "0.8"}), milli({"0.1", "0.25", "0.9", "0.75"})),
                   false).text(),
            "max_value:\npriority: [0.5 0.8 0.1 0.8], value: [0.1 0.25 0.9 0.75]\nvalue:\n0.25\n\n");
  // The last item wins; the value is copied in CLRS's number format (trailing zeros stripped).
  EXPECT_EQ(render(Algorithm::max_value, items(milli({"0.25", "0.04", "0.999"}), milli({"0.61", "0.77", "0.070"})), false)
                .text(),
            "max_value:\npriority: [0.25 0.04 0.999], value: [0.61 0.77 0.07]\nvalue:\n0.07\n\n");
  const Sample zero = render(Algorithm::max_value, items(milli({"0.9", "0.1"}), milli({"0", "0.5"})), false);
  EXPECT_EQ(zero.answer, "0\n\n");
  EXPECT_EQ(zero.final_output, "0");
  EXPECT_EQ(largest_output_index(Algorithm::max_value, zero), -1);  // a copied value names no index
  // No trace, and inputs that do not fit are refused.
  EXPECT_THROW(render(Algorithm::max_value, items(milli({"0.9", "0.1"}), milli({"0", "0.5"})), true), sharp::BadInput);
  EXPECT_THROW(render(Algorithm::max_value, items(milli({"0.9", "0.1"}), milli({"0"})), false), sharp::BadInput);
  EXPECT_THROW(render(Algorithm::max_value, items(milli({"0.9"}), milli({"0"})), false), sharp::BadInput);
  EXPECT_FALSE(length_refusal(Algorithm::max_value, 8, true).empty());
  EXPECT_TRUE(length_refusal(Algorithm::max_value, 8, false).empty());
  // A drawn sample: one number per item and field, the answer one of the values.
  const TaskInput in = draw_input(5, Algorithm::max_value, 16, 3);
  ASSERT_EQ(in.priority.size(), 16u);
  ASSERT_EQ(in.value.size(), 16u);
  EXPECT_EQ(in.length(), 16);
  const Sample drawn = render(Algorithm::max_value, in, false);
  EXPECT_EQ(drawn.question.rfind("max_value:\npriority: [", 0), 0u) << drawn.question;
  EXPECT_NE(drawn.question.find("], value: ["), std::string::npos);
  EXPECT_EQ(drawn.question.substr(drawn.question.size() - 8), "\nvalue:\n");
  EXPECT_NE(drawn.question.find(" " + drawn.final_output + " "), std::string::npos);
  EXPECT_TRUE(score_answer(drawn, drawn.answer, false).exact_final);
}

// The output-extrapolation confound's data (docs/science.md#algorithmic-text): the largest index the
// expected final output names, -1 when it names none.
TEST(TextFormat, LargestOutputIndexIsTheLargestIndexTheOutputNames) {
  EXPECT_EQ(largest_output_index(Algorithm::minimum, render(Algorithm::minimum, keys(milli({"0.5", "0.2", "0.7", "0.2"})), false)), 1);
  std::vector<Milli> long_keys(20, 900);
  long_keys[17] = 100;
  EXPECT_EQ(largest_output_index(Algorithm::minimum, render(Algorithm::minimum, keys(long_keys), false)), 17);
  const TaskInput kadane = keys(milli({"0.098", "0.43", "0.206", "0.09", "-0.153"}));
  EXPECT_EQ(largest_output_index(Algorithm::find_maximum_subarray_kadane,
                                 render(Algorithm::find_maximum_subarray_kadane, kadane, false)), 3);  // "0, 3"
  const TaskInput search = keys(milli({"0.424", "0.545", "0.549", "0.603", "0.715"}), parse_milli("0.646"));
  EXPECT_EQ(largest_output_index(Algorithm::binary_search, render(Algorithm::binary_search, search, true)), 4);  // "(4, 4)"
  EXPECT_EQ(largest_output_index(Algorithm::insertion_sort, render(Algorithm::insertion_sort, search, false)), -1);
  TaskInput act;
  act.s = milli({"0.1", "0.5"});
  act.f = milli({"0.4", "0.6"});
  EXPECT_EQ(largest_output_index(Algorithm::activity_selector, render(Algorithm::activity_selector, act, false)), -1);
}

TEST(TextFormat, NumbersTruncatedAndStripped) {
  EXPECT_EQ(format_milli(truncate_to_milli(0.0779)), "0.077");
  EXPECT_EQ(format_milli(truncate_to_milli(0.0901)), "0.09");
  EXPECT_EQ(format_milli(truncate_to_milli(0.83)), "0.83");
  EXPECT_EQ(format_milli(truncate_to_milli(0.0009)), "0");
  EXPECT_EQ(format_milli(truncate_to_milli(-0.0009)), "0");  // never -0
  EXPECT_EQ(format_milli(truncate_to_milli(-0.1539)), "-0.153");  // toward zero, as numpy's trunc
  EXPECT_EQ(format_milli(parse_milli("-0.5")), "-0.5");
  EXPECT_EQ(format_milli(parse_milli("1.000")), "1");
  for (const char* bad : {"", "-", ".", "0.0001", "abc", "1e3", "0.5x", "1000"}) {
    EXPECT_THROW(parse_milli(bad), sharp::BadInput) << bad;
  }
}

TEST(TextFormat, FinalOutputsAgreeWithIndependentImplementations) {
  int activity_checked = 0;
  for (int length = 4; length <= 20; ++length) {
    for (std::uint64_t index = 0; index < 40; ++index) {
      for (Algorithm a : kAlgorithms) {
        const TaskInput in = draw_input(7, a, length, index);
        const Sample s = render(a, in, false);
        ASSERT_EQ(s.answer, s.final_output + "\n\n");
        switch (a) {
          case Algorithm::minimum: EXPECT_EQ(s.final_output, first_minimum(in.key)); break;
          case Algorithm::max_value:
            ASSERT_EQ(in.priority.size(), in.value.size());
            EXPECT_EQ(s.final_output, value_of_first_highest(in.priority, in.value));
            break;
          case Algorithm::binary_search:
            ASSERT_TRUE(std::is_sorted(in.key.begin(), in.key.end()));
            EXPECT_EQ(s.final_output, first_not_below(in.key, in.target));
            break;
          case Algorithm::find_maximum_subarray_kadane: EXPECT_EQ(s.final_output, best_subarray(in.key)); break;
          case Algorithm::activity_selector: {
            if (length > 12) break;  // the brute force is exponential
            std::vector<int> chosen;
            for (int i = 0; i < length; ++i) {
              ASSERT_LE(in.s[i], in.f[i]);
              if (s.final_output[1 + 2 * i] == '1') chosen.push_back(i);
            }
            EXPECT_EQ(static_cast<int>(chosen.size()), most_activities(in)) << s.text();
            ++activity_checked;
            break;
          }
          default: EXPECT_EQ(s.final_output, sorted_keys(in.key)) << s.text();
        }
        // With a trace the final output is the same (pair traces print it as their last state).
        if (length <= 10 && length_refusal(a, length, true).empty()) {
          const Sample t = render(a, in, true);
          if (has_pair_trace(a)) {
            EXPECT_EQ(t.final_output, "(" + (a == Algorithm::binary_search ? s.final_output + ", " + s.final_output
                                                                           : s.final_output) + ")");
          } else {
            EXPECT_EQ(t.final_output, s.final_output);
          }
        }
      }
    }
  }
  EXPECT_GT(activity_checked, 300);
}

TEST(TextFormat, SampleIsAFunctionOfSeedAlgorithmLengthIndex) {
  EXPECT_EQ(draw_sample(1, Algorithm::quicksort, 8, 3, false).text(), draw_sample(1, Algorithm::quicksort, 8, 3, false).text());
  EXPECT_NE(draw_sample(1, Algorithm::quicksort, 8, 3, false).text(), draw_sample(1, Algorithm::quicksort, 8, 4, false).text());
  EXPECT_NE(draw_sample(1, Algorithm::quicksort, 8, 3, false).text(), draw_sample(2, Algorithm::quicksort, 8, 3, false).text());
  EXPECT_NE(draw_sample(1, Algorithm::quicksort, 8, 3, false).question.substr(10),
            draw_sample(1, Algorithm::heapsort, 8, 3, false).question.substr(9));
}

TEST(TextFormat, TokeniseThenDetokeniseIsTheIdentity) {
  for (Algorithm a : kAlgorithms) {
    for (int length : {4, 5, 10, 16}) {
      for (bool trace : {false, true}) {
        if (!length_refusal(a, length, trace).empty()) continue;
        for (std::uint64_t index = 0; index < 5; ++index) {
          const std::string text = draw_sample(3, a, length, index, trace).text();
          const auto tokens = tokenise(text);
          EXPECT_EQ(detokenise(tokens), text);
          EXPECT_EQ(tokenise(detokenise(tokens)), tokens);
          EXPECT_LE(static_cast<int>(tokens.size()), token_bound(a, length, trace)) << text;
          // Names are one token each: the first token is the algorithm.
          EXPECT_EQ(token_text(tokens.front()), algorithm_name(a));
        }
      }
    }
  }
  EXPECT_EQ(tokenise("\n").front(), newline_token());
  EXPECT_THROW(tokenise("heapsort: x"), sharp::BadInput);
  EXPECT_THROW(tokenise("key: 1e3"), sharp::BadInput);
  EXPECT_THROW(detokenise({vocabulary_size()}), sharp::BadInput);
}

TEST(TextFormat, LengthRulesFollowClrsTextAndTheTokenCap) {
  EXPECT_TRUE(length_refusal(Algorithm::heapsort, 5, true).empty());
  EXPECT_FALSE(length_refusal(Algorithm::heapsort, 6, true).empty());   // not a quadratic-trace length
  EXPECT_FALSE(length_refusal(Algorithm::bubble_sort, 10, true).empty());  // over 2048 tokens
  EXPECT_TRUE(length_refusal(Algorithm::insertion_sort, 10, true).empty());
  EXPECT_TRUE(length_refusal(Algorithm::insertion_sort, 64, false).empty());
  EXPECT_TRUE(length_refusal(Algorithm::minimum, 64, true).empty());
  EXPECT_FALSE(length_refusal(Algorithm::minimum, 3, false).empty());
  for (Algorithm a : kAlgorithms) {
    for (int n = 4; n <= 64; ++n) {
      for (bool trace : {false, true}) {
        if (length_refusal(a, n, trace).empty()) {
          EXPECT_LE(token_bound(a, n, trace), kMaxSampleTokens);
        }
      }
    }
  }
}

// A given input (sharp-text-sample --keys) may have any number of keys: the bound grows with it and
// saturates, never wraps to a small or negative count that would pass the cap (issue 26 item 10).
TEST(TextFormat, TokenBoundSaturatesForAnyLength) {
  for (Algorithm a : kAlgorithms)
    for (bool trace : {false, true}) {
      int previous = 0;
      for (int n : {1, 2, 100, 400, 1024, 100000, 1 << 30}) {
        const int bound = token_bound(a, n, trace);
        EXPECT_GE(bound, previous) << algorithm_name(a) << " at " << n;
        previous = bound;
      }
      EXPECT_GT(previous, kMaxSampleTokens);
    }
  EXPECT_EQ(token_bound(Algorithm::quicksort, 1 << 30, true), std::numeric_limits<int>::max());
}

TEST(TextFormat, BadInputsAreRefused) {
  EXPECT_THROW(parse_algorithm("mergesort"), sharp::BadInput);
  EXPECT_THROW(render(Algorithm::binary_search, keys(milli({"0.5", "0.1", "0.7", "0.8"})), false), sharp::BadInput);
  EXPECT_THROW(render(Algorithm::minimum, keys(milli({"0.5"})), false), sharp::BadInput);
  TaskInput act;
  act.s = milli({"0.5", "0.1"});
  act.f = milli({"0.4", "0.2"});
  EXPECT_THROW(render(Algorithm::activity_selector, act, false), sharp::BadInput);
}

TEST(TextFormat, AnswerScoreCountsExactAndElementwise) {
  const Sample s = render(Algorithm::insertion_sort, keys(milli({"0.549", "0.715", "0.603", "0.545", "0.424"})), false);
  AnswerScore a = score_answer(s, s.answer, false);
  EXPECT_TRUE(a.terminated && a.exact_answer && a.exact_final);
  EXPECT_EQ(a.elements_right, 5);
  a = score_answer(s, "[0.424 0.545 0.5 0.603 0.715]\n\n", false);
  EXPECT_FALSE(a.exact_final);
  EXPECT_EQ(a.elements_right, 4);
  EXPECT_EQ(a.elements_expected, 5);
  a = score_answer(s, "[0.424 0.545 0.549 0.603 0.715]", false);  // no terminator: wrong
  EXPECT_FALSE(a.terminated || a.exact_final);
  EXPECT_EQ(a.elements_right, 0);
  EXPECT_EQ(score_answer(s, "0.424 0.545\n\n", false).elements_right, 0);  // unparseable
  const Sample t = render(Algorithm::binary_search,
                          keys(milli({"0.424", "0.545", "0.549", "0.603", "0.715"}), parse_milli("0.646")), true);
  a = score_answer(t, "(3, 3) | (4, 4)\n\n", true);
  EXPECT_TRUE(a.exact_final);
  EXPECT_FALSE(a.exact_answer);
  EXPECT_EQ(a.elements_right, 2);
}

#include "text/tokeniser.hpp"

#include <array>

#include "core/errors.hpp"

namespace sharp::text {
namespace {

// Characters first, then words; a word is a maximal run of [a-z_].
constexpr std::array<std::string_view, 17> kCharacters = {"\n", " ", "(", ")", ",", "-", ".", ":", "[",
                                                          "]",  "|", "0", "1", "2", "3", "4", "5"};
constexpr std::array<std::string_view, 4> kMoreDigits = {"6", "7", "8", "9"};
constexpr std::array<std::string_view, 27> kWords = {
    // algorithms
    "minimum", "binary_search", "find_maximum_subarray_kadane", "activity_selector", "insertion_sort", "bubble_sort",
    "heapsort", "quicksort",
    // field names
    "key", "target", "s", "f", "initial_trace", "trace", "pred", "min", "return", "start", "end", "selected", "low",
    "high", "best_low", "best_high",
    // max_value (ours): its name and fields
    "max_value", "priority", "value"};

constexpr int kCharCount = static_cast<int>(kCharacters.size() + kMoreDigits.size());

std::string_view entry(int id) {
  if (id < static_cast<int>(kCharacters.size())) return kCharacters[static_cast<std::size_t>(id)];
  if (id < kCharCount) return kMoreDigits[static_cast<std::size_t>(id) - kCharacters.size()];
  return kWords[static_cast<std::size_t>(id - kCharCount)];
}

bool is_word_char(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }

}  // namespace

int vocabulary_size() { return kCharCount + static_cast<int>(kWords.size()); }

std::string_view token_text(Token t) {
  if (t < 0 || t >= vocabulary_size()) throw BadInput("token id " + std::to_string(t) + " outside the vocabulary");
  return entry(t);
}

Token newline_token() { return 0; }

std::vector<Token> tokenise(std::string_view text) {
  std::vector<Token> out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_word_char(text[i])) {
      std::size_t end = i;
      while (end < text.size() && is_word_char(text[end])) ++end;
      const std::string_view word = text.substr(i, end - i);
      Token found = -1;
      for (std::size_t w = 0; w < kWords.size(); ++w) {
        if (kWords[w] == word) found = kCharCount + static_cast<Token>(w);
      }
      if (found < 0)
        throw BadInput("offset " + std::to_string(i) + ": '" + std::string(word) + "' is not in the vocabulary");
      out.push_back(found);
      i = end;
      continue;
    }
    Token found = -1;
    for (int c = 0; c < kCharCount; ++c) {
      if (entry(c).front() == text[i]) found = c;
    }
    if (found < 0) {
      throw BadInput("offset " + std::to_string(i) + ": character code " +
                     std::to_string(static_cast<unsigned char>(text[i])) + " is not in the vocabulary");
    }
    out.push_back(found);
    ++i;
  }
  return out;
}

std::string detokenise(const std::vector<Token>& tokens) {
  std::string s;
  for (Token t : tokens) s += token_text(t);
  return s;
}

}  // namespace sharp::text

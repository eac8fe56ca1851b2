#pragma once
// Character-level tokeniser of the CLRS-Text grammar (docs/science.md#clrs-text-format): one token
// per character of the alphabet (digits, '.', '-', ' ', brackets, ',', ':', '|', '\n') and one per
// algorithm or field name ("heapsort", "initial_trace", "key", ...). Ids are fixed by the order of
// the tables in tokeniser.cpp (the model files depend on them: append, never reorder).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sharp::text {

using Token = std::int32_t;

int vocabulary_size();
// Throws BadInput naming the offset of the first character or word outside the vocabulary.
std::vector<Token> tokenise(std::string_view text);
// Throws BadInput for an id outside [0, vocabulary_size()).
std::string detokenise(const std::vector<Token>& tokens);
// The text of one token.
std::string_view token_text(Token t);
// The id of "\n" (an answer ends with two of them).
Token newline_token();

}  // namespace sharp::text

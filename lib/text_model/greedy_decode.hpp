#pragma once
// Greedy decoding of a text model (docs/science.md#algorithmic-text) with the key/value cache
// (transformer/decoder.hpp): the question is pushed token by token, then the argmax of the logits
// (lowest token id on ties) is appended until the answer's blank line "\n\n" or `budget` tokens.
// The observer, if given, sees every pushed token's query row in every head — the question's and
// the generated ones (the last generated token is never pushed: nothing reads its logits).
#include <cstddef>
#include <vector>

#include "text/tokeniser.hpp"
#include "transformer/model.hpp"

namespace sharp::text_model {

// The generated tokens (at most `budget`, ending with two newline tokens when the model stopped).
// Throws sharp::BadInput for an empty question or one the model's config refuses. T: float (the
// evaluation) or double (tests, where near-ties of the logits cannot flip the argmax).
template <class T>
std::vector<text::Token> greedy_decode(const transformer::Transformer& model, const T* params,
                                       const std::vector<text::Token>& question, std::size_t budget,
                                       transformer::AttentionObserver* observer = nullptr);

}  // namespace sharp::text_model

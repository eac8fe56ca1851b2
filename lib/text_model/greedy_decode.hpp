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

// The most tokens decoding may generate after a question of `question` tokens: `budget`, or fewer
// where a learned positional table ends (question plus generated tokens at most max_length; none
// when the question fills the table). Other positional schemes have no end.
std::size_t decoding_room(const transformer::TransformerConfig& config, std::size_t question, std::size_t budget);

// The generated tokens (at most decoding_room(..., budget), ending with two newline tokens when the
// model stopped): a learned-positional model stops at its table's end, and a question longer than the
// table gets no tokens (nothing is pushed; the observer sees no row). Throws sharp::BadInput for an
// empty question. T: float (the evaluation) or double (tests, where near-ties of the logits cannot
// flip the argmax).
template <class T>
std::vector<text::Token> greedy_decode(const transformer::Transformer& model, const T* params,
                                       const std::vector<text::Token>& question, std::size_t budget,
                                       transformer::AttentionObserver* observer = nullptr);

}  // namespace sharp::text_model

#include "text_model/greedy_decode.hpp"

#include <algorithm>

#include "core/errors.hpp"
#include "transformer/decoder.hpp"

namespace sharp::text_model {

std::size_t decoding_room(const transformer::TransformerConfig& config, std::size_t question, std::size_t budget) {
  if (config.positional != transformer::Positional::Learned) return budget;
  return question >= config.max_length ? 0 : std::min(budget, config.max_length - question);
}

template <class T>
std::vector<text::Token> greedy_decode(const transformer::Transformer& model, const T* params,
                                       const std::vector<text::Token>& question, std::size_t budget,
                                       transformer::AttentionObserver* observer) {
  if (question.empty()) throw BadInput("greedy decoding needs a question of at least one token");
  // Past a learned table's last row the model has no position to give a token: the answer stops there.
  budget = decoding_room(model.config(), question.size(), budget);
  if (budget == 0) return {};
  transformer::Decoder<T> decoder(model, params, question.size() + budget);
  std::vector<T> logits(model.config().vocab);
  for (text::Token t : question) decoder.push(t, logits.data(), observer);
  std::vector<text::Token> out;
  while (out.size() < budget) {
    text::Token best = 0;
    for (std::size_t v = 1; v < logits.size(); ++v)
      if (logits[v] > logits[std::size_t(best)]) best = text::Token(v);  // lowest index on ties
    out.push_back(best);
    const std::size_t k = out.size();
    if (k >= 2 && out[k - 1] == text::newline_token() && out[k - 2] == text::newline_token()) break;
    if (out.size() < budget) decoder.push(best, logits.data(), observer);
  }
  return out;
}

template std::vector<text::Token> greedy_decode(const transformer::Transformer&, const float*,
                                                const std::vector<text::Token>&, std::size_t,
                                                transformer::AttentionObserver*);
template std::vector<text::Token> greedy_decode(const transformer::Transformer&, const double*,
                                                const std::vector<text::Token>&, std::size_t,
                                                transformer::AttentionObserver*);

}  // namespace sharp::text_model

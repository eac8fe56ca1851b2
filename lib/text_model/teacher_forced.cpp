#include "text_model/teacher_forced.hpp"

#include "nn/omp_threads.hpp"
#include "text/tokeniser.hpp"
#include "text_model/token_batch.hpp"
#include "transformer/token_loss.hpp"

namespace sharp::text_model {

TeacherForcedScore teacher_forced_score(const transformer::Transformer& model, const float* params,
                                        const std::vector<text::Sample>& samples, int threads) {
  nn::OmpThreadsScope scope(threads);
  const std::size_t vocab = model.config().vocab;
  TeacherForcedScore s;
  double loss_sum = 0.0;
  std::int64_t tokens = 0, right = 0, exact = 0;
  constexpr std::size_t kGroup = 16;  // samples per forward pass (bounds the logits' memory)
  for (std::size_t first = 0; first < samples.size(); first += kGroup) {
    const std::vector<text::Sample> group(samples.begin() + std::ptrdiff_t(first),
                                          samples.begin() + std::ptrdiff_t(std::min(samples.size(), first + kGroup)));
    const TokenBatch b = make_token_batch(group);
    std::vector<float> logits(b.batch * b.length * vocab);
    transformer::transformer_forward<float>(model, params, b.inputs.data(), b.batch, b.length, logits.data());
    for (std::size_t r = 0; r < b.batch; ++r) {
      bool all = true;
      for (std::size_t i = 0; i < b.length; ++i) {
        const std::int32_t target = b.targets[r * b.length + i];
        if (target == transformer::kIgnoreTarget) continue;
        const transformer::TokenLoss l = transformer::token_cross_entropy<float>(
            nullptr, logits.data() + (r * b.length + i) * vocab, &target, 1, vocab, 1.0);
        loss_sum += l.loss_sum;
        tokens += 1;
        right += l.correct;
        all = all && l.correct == 1;
      }
      s.correct.push_back(all ? 1 : 0);
      exact += all ? 1 : 0;
    }
  }
  s.loss = tokens ? loss_sum / double(tokens) : 0.0;
  s.token_accuracy = tokens ? double(right) / double(tokens) : 0.0;
  s.exact_match = samples.empty() ? 0.0 : double(exact) / double(samples.size());
  return s;
}

}  // namespace sharp::text_model

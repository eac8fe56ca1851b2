#pragma once
// Evaluation of a trained max-retrieval model on sets of any size n (docs/science.md#max-retrieval; n = 2^20 and beyond)
// with memory O(chunk), several head normalisers on the same samples (paired: they share the item
// MLP pass). Items stream through ψ in chunks of `chunk_items`; per chunk e = h·u with the algebra of docs/science.md#max-retrieval
// u = W_Kᵀ W_Q h_q/√d, and for each normaliser, by what it answers (never by its name):
//   a temperature (the softmax family, normalisers/temperature.hpp) with β = beta(n) (softmax's β,
//     ssmax's s·ln n): one online accumulation (online_attention.hpp);
//   a temperature that needs the entropy pass (adaptive, docs/science.md#adaptive-temperature): the
//     β = 1 accumulation of the first pass gives the entropy H and β = beta_after(H); a second pass
//     (items regenerated from the counter RNG) accumulates with β, unless β = 1;
//   no temperature: the logits of the first pass are kept (O(n) floats, the one exception to
//     O(chunk) memory), the exact normaliser runs on the whole row, and a second pass accumulates
//     Σ p_i h_i.
// Then z = W_V Σ α_i h_i and φ(z) gives the prediction. Results are a function of the sample key,
// n and chunk_items only (not of the thread count).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "max_retrieval/model.hpp"
#include "max_retrieval/online_attention.hpp"
#include "normalisers/normaliser.hpp"

namespace sharp::max_retrieval {

struct NormaliserOutcome {
  std::int32_t prediction = 0;
  std::array<float, kClasses> logits{};
  double entropy = 0.0;  // H(α) in nats
  double weight_on_max = 0.0;  // α of the highest-priority item
  double beta = 1.0;  // inverse temperature applied (adaptive: β(H); ssmax: s·ln n; 1 without a temperature)
  std::vector<double> map;  // α of the map_items highest-priority items, by decreasing priority
};

struct SampleResult {
  std::int32_t label = 0;
  std::int32_t argmax = 0;  // index of the highest-priority item (the true maximum)
  // The error taken apart (docs/science.md#max-retrieval), events that do not depend on the normaliser:
  bool oracle = false;  // φ(W_V ψ(true maximum)) reads the label: attention weight 1 on it suffices
  bool ranking = false;  // the highest head logit (first, on a tie) is on the true maximum
  std::vector<NormaliserOutcome> outcomes;  // one per normaliser, in the evaluator's order
};

class StreamingEvaluator {
 public:
  // params: the model's flat float parameters (kept by pointer; must outlive the evaluator).
  StreamingEvaluator(const ModelLayout& layout, const float* params, const std::vector<norm::Spec>& normalisers,
                     std::size_t chunk_items);
  ~StreamingEvaluator();

  std::size_t normalisers() const;
  std::size_t chunk_items() const { return chunk_; }

  // One sample of n items (key = set_sample_key(...)); map_items > 0 records the attention map.
  SampleResult evaluate(std::uint64_t sample_key, std::size_t n, std::size_t map_items) const;

  // Samples first .. first + count − 1 of a set (keys set_sample_key(set_key, index)), in parallel
  // over samples (BLAS serial inside); samples with index < map_samples record maps of map_items.
  std::vector<SampleResult> evaluate_set(std::uint64_t set_key, std::size_t first, std::size_t count, std::size_t n,
                                         std::size_t map_samples, std::size_t map_items, int threads) const;

 private:
  struct Rule;
  struct Workspace;
  SampleResult run(std::uint64_t sample_key, std::size_t n, std::size_t map_items, Workspace& ws) const;

  const ModelLayout& layout_;
  const float* params_;
  std::vector<Rule> rules_;
  std::size_t chunk_;
};

}  // namespace sharp::max_retrieval

#pragma once
// Training a transformer in float32 with AdamW and a learning-rate schedule (lib/nn): next-token
// cross-entropy, mean over the batch's counted targets (a target of −1 is ignored).
// Sequences of a batch have one length; shorter ones are padded at the end with any token and target
// −1. In a causal model a pad at the end reaches no earlier position, so padding is masked by
// construction; sequences are never packed together.
// Determinism: the batch is cut into fixed chunks of sequences (kChunkTokens tokens, at least one
// sequence); each chunk's forward and backward run serially (BLAS too) on one thread into its own
// gradient buffer; the chunk gradients are summed in chunk order in double. So a step is bit-identical
// for any thread count.
// A causal chunk runs only through its last counted target (trailing pads of every sequence of the
// chunk dropped): in a causal model those rows reach no earlier row and their gradient is exactly 0,
// so dropping them changes no bit of the step, only its cost (text batches pad to the longest sample).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nn/adamw.hpp"
#include "nn/lr_schedule.hpp"
#include "transformer/model.hpp"
#include "transformer/token_loss.hpp"

namespace sharp::transformer {

inline constexpr std::size_t kChunkTokens = 256;

struct TrainerConfig {
  TransformerConfig model;
  nn::AdamWConfig optimiser;  // decay_size is set from the layout (no decay on learned scalars)
  nn::LrSchedule schedule;
  double clip = 1.0;  // global-norm gradient clipping; <= 0: none
};

struct StepStats {
  double loss = 0.0;  // mean over counted targets
  std::int64_t targets = 0, correct = 0;
  double grad_norm = 0.0;  // before clipping
  double lr = 0.0;
};

class Trainer {
 public:
  // Initialises the weights from init_key (layout.hpp). Throws sharp::BadInput on a bad config.
  Trainer(const TrainerConfig& config, std::uint64_t init_key, int threads);

  // One update. inputs, targets [batch, length]. Throws sharp::BadInput for bad tokens or targets or
  // a batch without a target, sharp::NumericError for a non-finite loss or gradient.
  StepStats step(const std::int32_t* inputs, const std::int32_t* targets, std::size_t batch, std::size_t length);

  const Transformer& model() const { return model_; }
  const TrainerConfig& config() const { return config_; }
  std::vector<float>& params() { return params_; }
  const std::vector<float>& params() const { return params_; }
  nn::AdamW& optimiser() { return optimiser_; }
  std::int64_t steps_done() const { return optimiser_.steps(); }

 private:
  struct ChunkState {
    ForwardCache<float> cache;
    std::vector<float> logits, dlogits;
    std::vector<std::int32_t> inputs, targets;  // the chunk's sequences cut to the rows it needs
  };
  TrainerConfig config_;
  Transformer model_;
  int threads_;
  std::vector<float> params_, grads_;
  std::vector<std::vector<float>> chunk_grads_;
  bool chunk_grads_zero_ = false;  // every chunk buffer is zero (the last step's sum cleared them)
  std::vector<ChunkState> states_;  // one per thread
  nn::AdamW optimiser_;
};

}  // namespace sharp::transformer

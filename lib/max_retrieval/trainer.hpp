#pragma once
// Training loop of the max-retrieval model (docs/science.md#max-retrieval): fresh data every step (sample = f(seed, step,
// index)), AdamW, optional global-norm clipping, a learning-rate schedule.
//
// Threads: the batch is cut into fixed chunks of kChunkSamples samples; chunks run in parallel (one
// OpenMP region per step; BLAS runs serially inside it), each into its own gradient buffer, and the
// chunk gradients are summed in chunk order in double. So the trainer is the one owner of the
// threads, and the result is bit-identical for any thread count (stronger than the rule of docs/architecture.md#determinism
// "same --threads" guarantee for BLAS-backed training).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "max_retrieval/data.hpp"
#include "max_retrieval/model.hpp"
#include "nn/adamw.hpp"
#include "nn/lr_schedule.hpp"
#include "normalisers/normaliser.hpp"

namespace sharp::max_retrieval {

inline constexpr std::size_t kChunkSamples = 16;

struct TrainConfig {
  ModelConfig model;  // model.normaliser: the head's spec during training
  std::size_t train_n = 16;  // items per training set (also model.train_n)
  std::size_t batch = 128;
  double weight_decay = 1e-3;
  double clip = 0.0;  // global-norm clipping threshold; 0 = off
  nn::LrSchedule schedule;  // holds lr and the total number of steps
};

struct StepStats {
  double loss = 0.0;  // batch mean cross-entropy (before the update)
  std::int64_t correct = 0;  // correct predictions in the batch (before the update)
  double grad_norm = 0.0;  // global norm before clipping
  double lr = 0.0;  // learning rate used
};

struct Evaluation {
  double loss = 0.0;  // mean cross-entropy
  std::int64_t correct = 0;
  std::int64_t samples = 0;
  double accuracy() const { return samples ? double(correct) / double(samples) : 0.0; }
};

class Trainer {
 public:
  Trainer(const TrainConfig& config, std::uint64_t init_key, std::uint64_t data_key, int threads);

  // One optimizer step on batch number steps_done().
  StepStats step();
  std::int64_t steps_done() const { return optimizer_.steps(); }

  // Forward only, on `samples` sets of n items with keys set_sample_key(set_key, index).
  Evaluation evaluate(std::uint64_t set_key, std::size_t samples, std::size_t n);

  const ModelLayout& layout() const { return layout_; }
  const TrainConfig& config() const { return config_; }
  // The head's normaliser with the current learned scalars.
  const norm::Normaliser& normaliser() const { return *normaliser_; }
  // Parameters [layout().params.size()] and optimizer state, e.g. for checkpoints.
  std::vector<float>& params() { return params_; }
  const std::vector<float>& params() const { return params_; }
  nn::AdamW& optimizer() { return optimizer_; }
  const nn::AdamW& optimizer() const { return optimizer_; }

 private:
  struct Workspace {
    Batch<float> batch;
    ModelCache<float> cache;
  };
  void bind_normaliser();  // rebuilds normaliser_ from the learned scalars in params_
  template <class ChunkBody>
  void for_each_chunk(std::size_t chunks, ChunkBody&& body);

  TrainConfig config_;
  ModelLayout layout_;
  std::unique_ptr<norm::Normaliser> normaliser_;
  std::uint64_t data_key_;
  int threads_;
  std::vector<float> params_, grads_;
  std::vector<std::vector<float>> chunk_grads_;  // [chunks][P]
  std::vector<Workspace> workspaces_;  // one per thread
  nn::AdamW optimizer_;
};

}  // namespace sharp::max_retrieval

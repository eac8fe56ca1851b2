#include "max_retrieval/trainer.hpp"

#include <omp.h>

#include <algorithm>

#include "core/errors.hpp"
#include "core/parallel_for.hpp"
#include "nn/chunk_gradients.hpp"
#include "nn/grad_clip.hpp"
#include "nn/omp_threads.hpp"

namespace sharp::max_retrieval {
namespace {

std::size_t chunk_count(std::size_t samples, std::size_t chunk) { return (samples + chunk - 1) / chunk; }

// The model's training length is the trainer's (ssmax:s=learn starts at 1/ln train_n).
TrainConfig with_model_train_n(TrainConfig config) {
  config.model.train_n = config.train_n;
  return config;
}

}  // namespace

Trainer::Trainer(const TrainConfig& config, std::uint64_t init_key, std::uint64_t data_key, int threads)
    : config_(with_model_train_n(config)),
      layout_(make_model_layout(config_.model)),
      data_key_(data_key),
      threads_(std::max(1, threads)),
      params_(layout_.params.size()),
      grads_(layout_.params.size()),
      chunk_grads_(chunk_count(config.batch, kChunkSamples), std::vector<float>(layout_.params.size())),
      workspaces_(std::size_t(threads_)),
      optimizer_(nn::AdamWConfig{0.9, 0.999, 1e-8, config.weight_decay, layout_.decay_size}, layout_.params.size()) {
  if (config.batch == 0 || config.train_n == 0) throw BadInput("training needs batch >= 1 and train_n >= 1");
  init_model_parameters(layout_, params_.data(), init_key);
  bind_normaliser();
}

void Trainer::bind_normaliser() {
  if (!normaliser_ || !layout_.scalars.empty())
    normaliser_ = norm::make_normaliser(bound_normaliser_spec(layout_, params_.data()));
}

// Runs body(chunk, workspace) for every chunk in parallel; rethrows the error of the lowest failing
// chunk (deterministic whatever the schedule).
template <class ChunkBody>
void Trainer::for_each_chunk(std::size_t chunks, ChunkBody&& body) {
  nn::OmpThreadsScope scope(threads_);
  parallel_for(chunks, Loop{"trainer/chunks", threads_},
               [&](std::size_t c, int thread) { body(c, workspaces_[std::size_t(thread)]); });
}

StepStats Trainer::step() {
  bind_normaliser();  // the scalars may have been set from a checkpoint
  const std::int64_t step = steps_done();
  const std::size_t B = config_.batch, P = params_.size();
  const std::size_t chunks = chunk_grads_.size();
  std::vector<nn::CrossEntropyTotals> totals(chunks);
  for_each_chunk(chunks, [&](std::size_t c, Workspace& ws) {
    const std::size_t first = c * kChunkSamples, count = std::min(kChunkSamples, B - first);
    generate_batch(ws.batch, count, config_.train_n, std::int64_t(first),
                   [&](std::int64_t index) { return train_sample_key(data_key_, step, index); });
    std::vector<float>& g = chunk_grads_[c];
    std::fill(g.begin(), g.end(), 0.0f);
    totals[c] = model_forward(layout_, *normaliser_, params_.data(), ws.batch, ws.cache);
    model_backward(layout_, *normaliser_, params_.data(), g.data(), ws.batch, ws.cache, 1.0 / double(B));
  });
  nn::sum_chunk_gradients(grads_.data(), chunk_grads_, chunks, P, threads_);
  StepStats stats;
  for (const auto& t : totals) {
    stats.loss += t.loss_sum;
    stats.correct += t.correct;
  }
  stats.loss /= double(B);
  stats.grad_norm = nn::clip_by_global_norm(grads_.data(), P, config_.clip);
  stats.lr = config_.schedule.at(step);
  optimizer_.step(params_.data(), grads_.data(), stats.lr);
  return stats;
}

Evaluation Trainer::evaluate(std::uint64_t set_key, std::size_t samples, std::size_t n) {
  bind_normaliser();
  const std::size_t chunks = chunk_count(samples, kChunkSamples);
  std::vector<nn::CrossEntropyTotals> totals(chunks);
  for_each_chunk(chunks, [&](std::size_t c, Workspace& ws) {
    const std::size_t first = c * kChunkSamples, count = std::min(kChunkSamples, samples - first);
    generate_batch(ws.batch, count, n, std::int64_t(first),
                   [&](std::int64_t index) { return set_sample_key(set_key, index); });
    totals[c] = model_forward(layout_, *normaliser_, params_.data(), ws.batch, ws.cache);
  });
  Evaluation e;
  e.samples = std::int64_t(samples);
  for (const auto& t : totals) {
    e.loss += t.loss_sum;
    e.correct += t.correct;
  }
  e.loss /= double(std::max<std::size_t>(samples, 1));
  return e;
}

}  // namespace sharp::max_retrieval

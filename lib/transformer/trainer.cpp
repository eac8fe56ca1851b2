#include "transformer/trainer.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "core/parallel_for.hpp"
#include "nn/chunk_gradients.hpp"
#include "nn/omp_threads.hpp"

namespace sharp::transformer {
namespace {

nn::AdamWConfig with_decay_size(nn::AdamWConfig c, std::size_t decay_size) {
  c.decay_size = decay_size;
  return c;
}

// Rows a chunk of `count` sequences needs: through the last counted target of any of them (a causal
// model's later rows reach nothing the loss sees). length when none is counted or the model is not causal.
std::size_t rows_needed(const std::int32_t* targets, std::size_t count, std::size_t length, bool causal) {
  if (!causal) return length;
  std::size_t needed = 0;
  for (std::size_t s = 0; s < count; ++s)
    for (std::size_t i = length; i > needed; --i)
      if (targets[s * length + i - 1] != kIgnoreTarget) {
        needed = i;
        break;
      }
  return needed == 0 ? length : needed;
}

}  // namespace

Trainer::Trainer(const TrainerConfig& config, std::uint64_t init_key, int threads)
    : config_(config),
      model_(config.model),
      threads_(std::max(1, threads)),
      params_(model_.parameter_count()),
      grads_(model_.parameter_count()),
      states_(std::size_t(threads_)),
      optimiser_(with_decay_size(config.optimiser, model_.layout().decay_size), model_.parameter_count()) {
  init_parameters(model_.layout(), params_.data(), init_key);
}

StepStats Trainer::step(const std::int32_t* inputs, const std::int32_t* targets, std::size_t batch,
                        std::size_t length) {
  const std::size_t P = params_.size(), V = model_.config().vocab;
  const std::size_t per_chunk = std::max<std::size_t>(1, kChunkTokens / std::max<std::size_t>(length, 1));
  const std::size_t chunks = (batch + per_chunk - 1) / per_chunk;
  std::int64_t counted = 0;
  for (std::size_t i = 0; i < batch * length; ++i) counted += targets[i] != kIgnoreTarget ? 1 : 0;
  if (counted == 0) throw BadInput("training batch has no target (every target is -1)");
  const double scale = 1.0 / double(counted);
  if (chunk_grads_.size() < chunks) chunk_grads_.resize(chunks);
  for (std::vector<float>& g : chunk_grads_)  // zero, unless the last sum left them so
    if (!chunk_grads_zero_ || g.size() != P) g.assign(P, 0.0f);
  chunk_grads_zero_ = false;
  std::vector<TokenLoss> totals(chunks);
  {
    nn::OmpThreadsScope scope(threads_);
    parallel_for(chunks, Loop{"transformer/trainer-chunks", threads_}, [&](std::size_t ci, int thread) {
      ChunkState& s = states_[std::size_t(thread)];
      const std::size_t first = ci * per_chunk, count = std::min(per_chunk, batch - first);
      const std::int32_t* in = inputs + first * length;
      const std::int32_t* out = targets + first * length;
      const std::size_t used = rows_needed(out, count, length, model_.config().causal);
      if (used < length) {  // the sequences cut to their first `used` rows
        s.inputs.resize(count * used);
        s.targets.resize(count * used);
        for (std::size_t q = 0; q < count; ++q) {
          std::copy_n(in + q * length, used, s.inputs.data() + q * used);
          std::copy_n(out + q * length, used, s.targets.data() + q * used);
        }
        in = s.inputs.data();
        out = s.targets.data();
      }
      const std::size_t rows = count * used;
      s.logits.resize(rows * V);
      s.dlogits.resize(rows * V);
      std::vector<float>& g = chunk_grads_[ci];
      transformer_forward(model_, params_.data(), in, count, used, s.logits.data(), &s.cache);
      totals[ci] = token_cross_entropy(s.dlogits.data(), s.logits.data(), out, rows, V, scale);
      transformer_backward(model_, params_.data(), in, s.dlogits.data(), s.cache, g.data());
    });
  }
  const double norm = nn::sum_and_clear_chunk_gradients(grads_.data(), chunk_grads_, chunks, P, threads_);
  chunk_grads_zero_ = true;
  if (!std::isfinite(norm)) throw NumericError("gradient norm is not finite (NaN or inf in the gradients)");
  StepStats stats;
  for (const TokenLoss& t : totals) {
    stats.loss += t.loss_sum;
    stats.targets += t.count;
    stats.correct += t.correct;
  }
  stats.loss /= double(stats.targets);
  stats.grad_norm = norm;
  stats.lr = config_.schedule.at(steps_done());
  // Clipping by global norm (grad_clip.hpp) fused into the update: one pass over the parameters.
  const double clip_scale = config_.clip > 0.0 && norm > config_.clip ? config_.clip / norm : 1.0;
  optimiser_.step(params_.data(), grads_.data(), stats.lr, clip_scale, threads_);
  return stats;
}

}  // namespace sharp::transformer

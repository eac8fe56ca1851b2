#include "max_retrieval/data.hpp"

#include "rng/counter_rng.hpp"

namespace sharp::max_retrieval {

std::uint64_t train_sample_key(std::uint64_t data_key, std::int64_t step, std::int64_t index) {
  return rng::child_key(rng::child_key(data_key, std::uint64_t(step)), std::uint64_t(index));
}

std::uint64_t set_sample_key(std::uint64_t set_key, std::int64_t index) {
  return rng::child_key(set_key, std::uint64_t(index));
}

template <class T>
void Batch<T>::resize(std::size_t samples, std::size_t items_per_sample) {
  size = samples;
  n = items_per_sample;
  items.resize(samples * items_per_sample * kItemFeatures);
  query.resize(samples);
  labels.resize(samples);
  argmax.resize(samples);
}

Item item_at(std::uint64_t stream_seed, std::uint64_t stream_gamma, std::uint64_t i) {
  const rng::StreamParams stream{stream_seed, stream_gamma};
  const float priority = float(rng::unit_from_bits(rng::bits_at(stream, 1 + 2 * i)));
  const auto cls = std::int32_t(double(kClasses) * rng::unit_from_bits(rng::bits_at(stream, 2 + 2 * i)));
  return {priority, cls};
}

float query_of(std::uint64_t sample_key) {
  return float(rng::unit_from_bits(rng::bits_at(rng::stream_params(sample_key), 0)));
}

void generate_items(std::uint64_t key, std::uint64_t first, std::size_t count, float* features, float* priorities,
                    std::int32_t* classes) {
  const rng::StreamParams stream = rng::stream_params(key);
  for (std::size_t j = 0; j < count; ++j) {
    const Item item = item_at(stream.seed, stream.gamma, first + j);
    float* x = features + j * kItemFeatures;
    x[0] = item.priority;
    for (std::size_t c = 0; c < kClasses; ++c) x[1 + c] = 0.0f;
    x[1 + item.cls] = 1.0f;
    priorities[j] = item.priority;
    classes[j] = item.cls;
  }
}

template <class T>
void generate_sample(std::uint64_t key, Batch<T>& batch, std::size_t slot) {
  const std::size_t n = batch.n;
  const rng::StreamParams stream = rng::stream_params(key);
  T* items = batch.items.data() + slot * n * kItemFeatures;
  batch.query[slot] = T(query_of(key));
  float best = -1.0f;
  std::int32_t best_index = 0, best_class = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Item item = item_at(stream.seed, stream.gamma, i);
    T* x = items + i * kItemFeatures;
    x[0] = T(item.priority);
    for (std::size_t c = 0; c < kClasses; ++c) x[1 + c] = T(0);
    x[1 + item.cls] = T(1);
    if (item.priority > best) {  // strict: the lowest index wins ties
      best = item.priority;
      best_index = std::int32_t(i);
      best_class = item.cls;
    }
  }
  batch.labels[slot] = best_class;
  batch.argmax[slot] = best_index;
}

template struct Batch<float>;
template struct Batch<double>;
template void generate_sample<float>(std::uint64_t, Batch<float>&, std::size_t);
template void generate_sample<double>(std::uint64_t, Batch<double>&, std::size_t);

}  // namespace sharp::max_retrieval

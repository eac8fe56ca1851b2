#include "transformer/layout.hpp"

#include <cmath>
#include <string>

#include "rng/counter_rng.hpp"

namespace sharp::transformer {

TransformerLayout make_layout(const TransformerConfig& config) {
  config.validate();
  TransformerLayout out;
  out.config = config;
  const std::size_t d = config.d_model, V = config.vocab;
  out.normaliser = norm::parse_learnable_spec(config.normaliser, config.train_length);
  auto add = [&](const std::string& name, std::vector<std::size_t> shape, Init init, double value = 0.0) {
    const std::size_t fan_in = shape.size() == 2 ? shape[1] : 0;
    const std::size_t offset = out.params.add(name, std::move(shape), init == Init::LeCun ? fan_in : 0);
    out.init.push_back(init);
    out.init_value.push_back(value);
    return offset;
  };
  out.embedding = add("embedding", {V, d}, Init::Normal);
  if (config.positional == Positional::Learned) out.position = add("position", {config.max_length, d}, Init::Normal);
  for (std::size_t l = 0; l < config.layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    BlockOffsets b;
    if (config.layer_norm) {
      b.ln1_gain = add(p + "ln1.gain", {d}, Init::One);
      b.ln1_bias = add(p + "ln1.bias", {d}, Init::Zero);
    }
    b.qkv_weight = add(p + "attn.qkv.weight", {3 * d, d}, Init::LeCun);
    b.qkv_bias = add(p + "attn.qkv.bias", {3 * d}, Init::Zero);
    b.out_weight = add(p + "attn.out.weight", {d, d}, Init::LeCun);
    b.out_bias = add(p + "attn.out.bias", {d}, Init::Zero);
    if (config.layer_norm) {
      b.ln2_gain = add(p + "ln2.gain", {d}, Init::One);
      b.ln2_bias = add(p + "ln2.bias", {d}, Init::Zero);
    }
    b.mlp_in_weight = add(p + "mlp.in.weight", {config.d_ff(), d}, Init::LeCun);
    b.mlp_in_bias = add(p + "mlp.in.bias", {config.d_ff()}, Init::Zero);
    b.mlp_out_weight = add(p + "mlp.out.weight", {d, config.d_ff()}, Init::LeCun);
    b.mlp_out_bias = add(p + "mlp.out.bias", {d}, Init::Zero);
    out.blocks.push_back(b);
  }
  if (config.layer_norm) {
    out.final_gain = add("final_ln.gain", {d}, Init::One);
    out.final_bias = add("final_ln.bias", {d}, Init::Zero);
  }
  out.unembedding = config.tied ? out.embedding : add("unembedding", {V, d}, Init::LeCun);
  out.decay_size = out.params.size();
  const norm::LearnableSpec& spec = out.normaliser;
  out.scalars.resize(config.layers);
  out.query_weights.resize(config.layers);
  for (std::size_t l = 0; l < config.layers; ++l)
    for (std::size_t i = 0; i < spec.learned.size(); ++i) {
      const std::string name = "layers." + std::to_string(l) + ".norm." + spec.learned[i];
      out.scalars[l].push_back(
          add(name, {config.heads}, Init::Constant, norm::learned_initial_raw(spec, i, config.train_length)));
      out.query_weights[l].push_back(spec.per_query[i] ? add(name + ".weight", {config.heads, d}, Init::Zero) : 0);
    }
  return out;
}

template <class T>
void init_parameters(const TransformerLayout& layout, T* params, std::uint64_t key) {
  const auto& tensors = layout.params.tensors();
  for (std::size_t t = 0; t < tensors.size(); ++t) {
    const nn::TensorInfo& info = tensors[t];
    T* p = params + info.offset;
    const Init init = layout.init[t];
    if (init == Init::Zero || init == Init::One || init == Init::Constant) {
      const double v = init == Init::One ? 1.0 : init == Init::Constant ? layout.init_value[t] : 0.0;
      for (std::size_t j = 0; j < info.size(); ++j) p[j] = T(v);
      continue;
    }
    const double scale = init == Init::Normal ? 1.0 : layout.config.init_scale / std::sqrt(double(info.fan_in));
    const std::uint64_t tensor_key = rng::child_key(key, t);
    for (std::size_t j = 0; j < info.size(); ++j) p[j] = T(scale * rng::normal(tensor_key, j));
  }
}

template void init_parameters<float>(const TransformerLayout&, float*, std::uint64_t);
template void init_parameters<double>(const TransformerLayout&, double*, std::uint64_t);

}  // namespace sharp::transformer

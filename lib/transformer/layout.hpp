#pragma once
// The parameters of a transformer in one flat buffer (nn/parameters.hpp), tensor names and order:
//   embedding [vocab, d]                          N(0, 1)
//   position [max_length, d]                      N(0, 1)              (learned positions only)
//   layers.L.ln1.gain [d], layers.L.ln1.bias [d]  1, 0                 (with LayerNorm only)
//   layers.L.attn.qkv.weight [3d, d]              LeCun × init_scale   rows: q of every head, k, v
//   layers.L.attn.qkv.bias [3d]                   0
//   layers.L.attn.out.weight [d, d], .bias [d]    LeCun × init_scale, 0
//   layers.L.ln2.gain [d], layers.L.ln2.bias [d]  1, 0                 (with LayerNorm only)
//   layers.L.mlp.in.weight [4d, d], .bias [4d]    LeCun × init_scale, 0
//   layers.L.mlp.out.weight [d, 4d], .bias [d]    LeCun × init_scale, 0
//   final_ln.gain [d], final_ln.bias [d]          1, 0                 (with LayerNorm only)
//   unembedding [vocab, d]                        LeCun × init_scale   (untied only)
//   layers.L.norm.<p> [heads]                     learned normaliser scalar p's raw value per head
//                                                 (normalisers/learned_scalars.hpp), every layer's
//                                                 in spec order, after every other tensor;
//   layers.L.norm.<p>.weight [heads, d]           0: p learned per query (query_parameters.hpp),
//                                                 raw = layers.L.norm.<p> + weight·h_q, right after it
// LeCun-normal: N(0, 1/fan_in), fan_in = the weight's column count. Value j of tensor t is
// std_t · rng::normal(rng::child_key(key, t), j) (the rule of nn::lecun_normal_init), so a tensor
// appended later never changes the values of earlier ones.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nn/parameters.hpp"
#include "normalisers/learned_scalars.hpp"
#include "transformer/config.hpp"

namespace sharp::transformer {

enum class Init { Zero, One, Normal, LeCun, Constant };

// Offsets of one block's tensors (ln offsets are unused without LayerNorm).
struct BlockOffsets {
  std::size_t ln1_gain = 0, ln1_bias = 0, qkv_weight = 0, qkv_bias = 0, out_weight = 0, out_bias = 0;
  std::size_t ln2_gain = 0, ln2_bias = 0, mlp_in_weight = 0, mlp_in_bias = 0, mlp_out_weight = 0, mlp_out_bias = 0;
};

struct TransformerLayout {
  TransformerConfig config;
  nn::ParameterLayout params;
  std::vector<Init> init;  // [params.tensors().size()]
  std::vector<double> init_value;  // [params.tensors().size()]: the value of Init::Constant
  norm::LearnableSpec normaliser;  // the heads' spec; learned scalars at their initial values
  std::vector<std::vector<std::size_t>> scalars;  // [layers][learned]: offset of layers.L.norm.<p>
  std::vector<std::vector<std::size_t>> query_weights;  // [layers][learned]: offset of layers.L.norm.<p>.weight
      // (0 for a parameter not learned per query)
  std::size_t decay_size = 0;  // weight decay applies to params [0, decay_size) only
  std::size_t embedding = 0, position = 0, final_gain = 0, final_bias = 0, unembedding = 0;
  std::vector<BlockOffsets> blocks;  // [layers]
};

// Validates the config (sharp::BadInput) and lays out its tensors.
TransformerLayout make_layout(const TransformerConfig& config);

// Writes every parameter as the table above says.
template <class T>
void init_parameters(const TransformerLayout& layout, T* params, std::uint64_t key);

}  // namespace sharp::transformer

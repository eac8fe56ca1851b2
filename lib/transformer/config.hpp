#pragma once
// Shape and options of a transformer (docs/science.md#transformers-disperse): token embedding over a
// finite vocabulary, a positional scheme, `layers` pre-LayerNorm blocks of multi-head attention + MLP
// (4·d_model, exact erf GELU) with residuals, a final LayerNorm, an unembedding (tied or not).
// Attention logits are scaled by 1/√d_head; every head normalises them with the normaliser spec.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sharp::transformer {

// none: no positional information (NoPE). sinusoidal: Vaswani's table, base 10^4, added to the
// embedding. learned: a trained table [max_length, d_model] added to the embedding. rope:
// rotate-half rotary embedding of every head's q and k, base 10^4. alibi: −slope_h·(distance) added
// to head h's scaled logits, slope_h = 2^(−8(h+1)/heads). index: position/64 added to coordinate 0 of
// the embedding. alibi and index are unbounded in the position (the theorem's negative controls).
enum class Positional { None, Sinusoidal, Learned, Rope, Alibi, Index };

Positional parse_positional(std::string_view name);  // throws sharp::BadInput
std::string positional_name(Positional p);
const std::vector<std::string>& positional_names();  // none, sinusoidal, learned, rope, alibi, index

struct TransformerConfig {
  std::size_t layers = 4;
  std::size_t heads = 4;
  std::size_t d_model = 128;
  std::size_t vocab = 64;
  bool causal = true;  // decoder (causal) or encoder (bidirectional)
  Positional positional = Positional::None;
  bool layer_norm = true;  // false: no LayerNorm anywhere (blocks and final)
  bool tied = true;  // unembedding = token embedding
  double init_scale = 1.0;  // multiplies every LeCun-normal weight
  std::size_t max_length = 1024;  // longest input of a `learned` model (its table's rows)
  std::string normaliser = "softmax";  // spec of every head's normaliser; may learn scalars
      // (normalisers/learned_scalars.hpp), one per head
  std::size_t train_length = 256;  // training input length: sets ssmax:s=learn's initial s

  std::size_t d_head() const { return d_model / heads; }
  std::size_t d_ff() const { return 4 * d_model; }

  // Throws sharp::BadInput naming the problem: zero sizes, d_model not a multiple of heads, odd
  // d_head with rope, odd d_model with sinusoidal, init_scale <= 0 or not finite, a bad spec.
  void validate() const;
  // Throws sharp::BadInput if an input of `length` tokens is not allowed (learned: > max_length).
  void check_length(std::size_t length) const;
};

}  // namespace sharp::transformer

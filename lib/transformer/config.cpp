#include "transformer/config.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "normalisers/learned_scalars.hpp"

namespace sharp::transformer {

const std::vector<std::string>& positional_names() {
  static const std::vector<std::string> names = {"none", "sinusoidal", "learned", "rope", "alibi", "index"};
  return names;
}

Positional parse_positional(std::string_view name) {
  const auto& names = positional_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return Positional(i);
  std::string allowed;
  for (const auto& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
  throw BadInput("unknown positional scheme '" + std::string(name) + "' (allowed: " + allowed + ")");
}

std::string positional_name(Positional p) { return positional_names().at(std::size_t(p)); }

void TransformerConfig::validate() const {
  if (layers == 0 || heads == 0 || d_model == 0 || vocab == 0)
    throw BadInput("transformer: layers, heads, d_model and vocab must be >= 1");
  if (d_model % heads != 0)
    throw BadInput("transformer: d_model " + std::to_string(d_model) + " is not a multiple of heads " +
                   std::to_string(heads));
  if (positional == Positional::Rope && d_head() % 2 != 0)
    throw BadInput("transformer: rope needs an even d_head (d_model / heads = " + std::to_string(d_head()) + ")");
  if (positional == Positional::Sinusoidal && d_model % 2 != 0)
    throw BadInput("transformer: sinusoidal positions need an even d_model");
  if (positional == Positional::Learned && max_length == 0)
    throw BadInput("transformer: a learned positional table needs max_length >= 1");
  if (!(init_scale > 0.0) || !std::isfinite(init_scale))
    throw BadInput("transformer: init_scale must be a finite number > 0");
  (void)norm::parse_learnable_spec(normaliser, train_length);
}

void TransformerConfig::check_length(std::size_t length) const {
  if (length == 0) throw BadInput("transformer: an input needs at least one token");
  if (positional == Positional::Learned && length > max_length)
    throw BadInput("transformer: input of " + std::to_string(length) + " tokens is longer than the learned " +
                   "positional table (max_length " + std::to_string(max_length) + ")");
}

}  // namespace sharp::transformer

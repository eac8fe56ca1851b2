#include "head_measure/head_weight_bound.hpp"

#include <cmath>

#include "linalg/largest_singular_value.hpp"
#include "transformer/positional.hpp"

namespace sharp::head_measure {

template <class T>
std::vector<HeadWeightBound> head_weight_bounds(const transformer::TransformerLayout& layout, const T* params,
                                                const std::vector<double>& input_norm_max, std::size_t length) {
  const transformer::TransformerConfig& c = layout.config;
  const std::size_t d = c.d_model, H = c.heads, dh = c.d_head();
  const std::vector<double> slopes = c.positional == transformer::Positional::Alibi
                                         ? transformer::alibi_slopes(H)
                                         : std::vector<double>(H, 0.0);
  std::vector<HeadWeightBound> out(c.layers * H);
  std::vector<double> block(dh * d);
  for (std::size_t l = 0; l < c.layers; ++l) {
    const T* w = params + layout.blocks[l].qkv_weight;   // [3d, d]: q rows, then k rows, then v rows
    const T* bias = params + layout.blocks[l].qkv_bias;  // [3d]
    const double R = input_norm_max[l];
    for (std::size_t h = 0; h < H; ++h) {
      HeadWeightBound& b = out[l * H + h];
      auto sigma = [&](std::size_t first_row) {
        for (std::size_t i = 0; i < dh * d; ++i) block[i] = double(w[first_row * d + i]);
        return linalg::largest_singular_value(block.data(), dh, d);
      };
      auto norm = [&](std::size_t first) {
        double s = 0;
        for (std::size_t i = 0; i < dh; ++i) s += double(bias[first + i]) * double(bias[first + i]);
        return std::sqrt(s);
      };
      b.sigma_q = sigma(h * dh);
      b.sigma_k = sigma(d + h * dh);
      b.bias_q = norm(h * dh);
      b.bias_k = norm(d + h * dh);
      b.bound = 2.0 * (b.sigma_q * R + b.bias_q) * (b.sigma_k * R + b.bias_k) / std::sqrt(double(dh)) +
                slopes[h] * double(length - 1);
    }
  }
  return out;
}

template std::vector<HeadWeightBound> head_weight_bounds<float>(const transformer::TransformerLayout&, const float*,
                                                                const std::vector<double>&, std::size_t);
template std::vector<HeadWeightBound> head_weight_bounds<double>(const transformer::TransformerLayout&, const double*,
                                                                 const std::vector<double>&, std::size_t);

}  // namespace sharp::head_measure

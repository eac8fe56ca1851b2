#include "head_measure/head_weight_bound.hpp"

#include <algorithm>
#include <cmath>

#include "linalg/largest_singular_value.hpp"
#include "transformer/positional.hpp"

namespace sharp::head_measure {

template <class T>
double layer_norm_output_norm_bound(const T* gain, const T* bias, std::size_t d) {
  double gain_max = 0, bias_sq = 0;
  for (std::size_t i = 0; i < d; ++i) {
    gain_max = std::max(gain_max, std::abs(double(gain[i])));
    bias_sq += double(bias[i]) * double(bias[i]);
  }
  return std::sqrt(double(d)) * gain_max + std::sqrt(bias_sq);
}

template <class T>
std::vector<HeadWeightBound> head_weight_bounds(const transformer::TransformerLayout& layout, const T* params,
                                                const std::vector<double>& input_norm_max, std::size_t length) {
  const transformer::TransformerConfig& c = layout.config;
  const std::size_t d = c.d_model, H = c.heads, dh = c.d_head();
  const std::vector<double> slopes =
      c.positional == transformer::Positional::Alibi ? transformer::alibi_slopes(H) : std::vector<double>(H, 0.0);
  std::vector<HeadWeightBound> out(c.layers * H);
  std::vector<double> block(dh * d);
  for (std::size_t l = 0; l < c.layers; ++l) {
    const transformer::BlockOffsets& o = layout.blocks[l];
    const T* w = params + o.qkv_weight;  // [3d, d]: q rows, then k rows, then v rows
    const T* bias = params + o.qkv_bias;  // [3d]
    const double R = input_norm_max[l];
    const double R_cert = c.layer_norm ? layer_norm_output_norm_bound(params + o.ln1_gain, params + o.ln1_bias, d) : R;
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
      const double alibi = slopes[h] * double(length - 1);
      auto spread_bound = [&](double r) {
        return 2.0 * (b.sigma_q * r + b.bias_q) * (b.sigma_k * r + b.bias_k) / std::sqrt(double(dh)) + alibi;
      };
      b.bound = spread_bound(R);
      b.certificate = spread_bound(R_cert);
      b.certificate_input_norm = R_cert;
    }
  }
  return out;
}

template double layer_norm_output_norm_bound<float>(const float*, const float*, std::size_t);
template double layer_norm_output_norm_bound<double>(const double*, const double*, std::size_t);
template std::vector<HeadWeightBound> head_weight_bounds<float>(const transformer::TransformerLayout&, const float*,
                                                                const std::vector<double>&, std::size_t);
template std::vector<HeadWeightBound> head_weight_bounds<double>(const transformer::TransformerLayout&, const double*,
                                                                 const std::vector<double>&, std::size_t);

}  // namespace sharp::head_measure

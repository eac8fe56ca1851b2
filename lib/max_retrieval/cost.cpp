#include "max_retrieval/cost.hpp"

namespace sharp::max_retrieval {
namespace {

using nn::Trans;

// An MLP's GEMMs on `rows` rows: forward, weight gradients, and input gradients of the layers
// whose input needs one (all but the first when the input is data).
void mlp_gemms(std::vector<GemmShape>& out, const nn::MlpShape& s, std::size_t rows, bool input_gradient) {
  for (std::size_t l = 0; l < s.layers(); ++l) {
    const std::size_t in = s.layer_in(l), o = s.layer_out(l);
    out.push_back({Trans::No, Trans::Yes, rows, o, in});  // y = x Wᵀ
    out.push_back({Trans::Yes, Trans::No, o, in, rows});  // dW += dyᵀ x
    if (l > 0 || input_gradient) out.push_back({Trans::No, Trans::No, rows, in, o});  // dx = dy W
  }
}

}  // namespace

std::vector<GemmShape> training_step_gemms(const ModelConfig& config, std::size_t B, std::size_t n) {
  const std::size_t W = config.width, d = config.width, D = config.depth;
  std::vector<GemmShape> g;
  mlp_gemms(g, {kItemFeatures, W, W, D}, B * n, false);  // ψ
  mlp_gemms(g, {1, W, W, D}, B, false);  // query MLP
  mlp_gemms(g, {d, W, kClasses, D}, B, true);  // φ (dz is needed)
  // Head: q, u, z forward; dW_V, dc, dW_K, dq, dW_Q, dhq backward.
  for (const GemmShape& s : {GemmShape{Trans::No, Trans::Yes, B, d, W}, GemmShape{Trans::No, Trans::No, B, W, d},
                             GemmShape{Trans::No, Trans::Yes, B, d, W}, GemmShape{Trans::Yes, Trans::No, d, W, B},
                             GemmShape{Trans::No, Trans::No, B, W, d}, GemmShape{Trans::Yes, Trans::No, d, W, B},
                             GemmShape{Trans::No, Trans::Yes, B, d, W}, GemmShape{Trans::Yes, Trans::No, d, W, B},
                             GemmShape{Trans::No, Trans::No, B, W, d}})
    g.push_back(s);
  return g;
}

double training_step_flops(const ModelConfig& config, std::size_t B, std::size_t n) {
  double f = 0.0;
  for (const GemmShape& s : training_step_gemms(config, B, n)) f += s.flops();
  // Head per set: e = h u, c = hᵀ α (forward); dα = h dc, du = hᵀ de, two rank-1 updates (backward).
  f += 6.0 * 2.0 * double(B) * double(n) * double(config.width);
  return f;
}

}  // namespace sharp::max_retrieval

#pragma once
// The max-retrieval model of docs/science.md#max-retrieval:
//   item MLP ψ: 11 → W → ReLU → … → W          h_i = ψ(x_i)
//   query MLP:   1 → W → ReLU → … → W          h_q
//   one attention head (nn/attention_head.hpp), d = W, no bias in W_Q, W_K, W_V, pluggable normaliser
//   output MLP φ: d → W → ReLU → … → 10         class logits; softmax cross-entropy
// `depth` is the number of hidden ReLU layers of each MLP (1 = the measured configuration of docs/science.md#max-retrieval-reconstructed).
// LeCun-normal weights, zero biases. All parameters live in one flat buffer (layout below), float32
// for training, double for gradient checks (the code is the same template).
// A normaliser spec with learned scalars (docs/science.md#learned-scalars, e.g. ssmax:s=learn) adds one
// tensor head.norm.<p> [1] per learned scalar, its raw value, placed last (after phi) so that the
// same seed gives the same initial weights for every remedy; weight decay stops before them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "max_retrieval/data.hpp"
#include "nn/attention_head.hpp"
#include "nn/cross_entropy.hpp"
#include "nn/mlp.hpp"
#include "nn/parameters.hpp"
#include "normalisers/learned_scalars.hpp"
#include "normalisers/normaliser.hpp"

namespace sharp::max_retrieval {

struct ModelConfig {
  std::size_t width = 128;
  std::size_t depth = 1;
  std::string normaliser = "softmax";  // the head's spec during training; may say `learn`
  std::size_t train_n = 16;  // training set size (sets ssmax:s=learn's initial s)
};

struct ModelLayout {
  ModelConfig config;
  nn::ParameterLayout params;
  nn::MlpLayout psi, query, phi;
  std::size_t W_Q = 0, W_K = 0, W_V = 0;  // offsets of the head's [d, W] matrices
  nn::HeadShape head;
  norm::LearnableSpec normaliser;  // the training spec, learned scalars at their initial values
  std::vector<std::size_t> scalars;  // [learned]: offset of head.norm.<p>
  std::size_t decay_size = 0;  // weight decay applies to params [0, decay_size) only
};

// Tensor names: psi.<l>.weight/bias, query.<l>.weight/bias, head.W_Q, head.W_K, head.W_V,
// phi.<l>.weight/bias, head.norm.<p>. Throws sharp::BadInput for a bad normaliser spec.
ModelLayout make_model_layout(const ModelConfig& config);

// Writes every parameter: LeCun-normal weights, zero biases (nn::lecun_normal_init), and each
// learned scalar's initial raw value.
void init_model_parameters(const ModelLayout& layout, float* params, std::uint64_t key);
void init_model_parameters(const ModelLayout& layout, double* params, std::uint64_t key);

// The head's normaliser with the learned scalars read from params (the training spec itself when
// nothing is learned): what the forward uses, and what a trained model is evaluated with.
template <class T>
norm::Spec bound_normaliser_spec(const ModelLayout& layout, const T* params);

// Per-batch activations (everything the backward needs) and gradient scratch; reused across calls.
template <class T>
struct ModelCache {
  std::vector<T> h;  // [B, n, W]  ψ(items)
  std::vector<T> hq;  // [B, W]     query MLP output
  std::vector<T> z;  // [B, d]     head output
  std::vector<T> logits;  // [B, 10]
  std::vector<T> probs;  // [B, 10]
  std::vector<T> dlogits, dz, dh, dhq;
  nn::MlpCache<T> psi, query, phi;
  nn::HeadCache<T> head;
  std::vector<double> dnorm;  // [B, P] per-sample gradient of the normaliser's parameters
};

// Forward pass over a batch; returns the summed loss and the number of correct predictions.
template <class T>
nn::CrossEntropyTotals model_forward(const ModelLayout& layout, const norm::Normaliser& normaliser, const T* params,
                                     const Batch<T>& batch, ModelCache<T>& cache);

// Backward of loss_scale · Σ_rows loss (loss_scale = 1/B for a batch mean): accumulates (+=) dL/dθ
// into grads [layout.params.size()], learned scalars included (the per-sample gradients summed in
// sample order, times d value / d raw). cache must hold model_forward of this batch, and
// normaliser must be the bound one of params.
template <class T>
void model_backward(const ModelLayout& layout, const norm::Normaliser& normaliser, const T* params, T* grads,
                    const Batch<T>& batch, ModelCache<T>& cache, double loss_scale);

}  // namespace sharp::max_retrieval

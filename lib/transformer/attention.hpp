#pragma once
// Multi-head attention of one layer over a batch of equal-length sequences (docs/science.md#notation).
// Shapes, for B sequences of n tokens, H heads of width d_head, W = H·d_head:
//   qkv [B, n, 3W]  per token: q of heads 0…H−1, then k of every head, then v (RoPE already applied)
//   out [B, n, W]   per token: head h's output at columns h·d_head …
// Head h of query i: e_j = q_i·k_j/√d_head (+ ALiBi bias) over its keys j < k(i) (causal: k(i) = i+1,
// encoder: n), α = normaliser_h(e) over those k(i) logits, out_i = Σ_j α_j v_j. A causal tile reaches
// the normaliser in one call, rows of kend entries with the keys beyond k(i) masked as −inf (never as
// a large negative number): the family gives them weight 0 and gradient 0 and the other entries the
// result of the unmasked prefix (docs/science.md#notation).
// Work is split into fixed tiles (sequence, head, kTileRows query rows), so results do not depend on
// the thread count; BLAS runs serially inside the tiles.
#include <cstddef>
#include <type_traits>
#include <vector>

#include "normalisers/normaliser.hpp"
#include "transformer/observer.hpp"

namespace sharp::transformer {

inline constexpr std::size_t kTileRows = 64;

struct AttentionShape {
  std::size_t batch = 1, length = 1, heads = 1, d_head = 1;
  bool causal = true;
  std::size_t width() const { return heads * d_head; }
  std::size_t keys(std::size_t row) const { return causal ? row + 1 : length; }
};

// The heads of one layer: normaliser of each head [H] and ALiBi slopes [H] (empty: no bias).
struct AttentionHeads {
  std::vector<const norm::Normaliser*> normalisers;
  std::vector<double> alibi;
  std::size_t layer = 0;  // reported to the observer
  // Parameters per query row (query_parameters.hpp): [B, H, n, P], P the normalisers' parameter count,
  // passed to Normaliser::forward/backward with row parameters; nullptr: each normaliser's own spec.
  const double* row_parameters = nullptr;
};

// Kept for the backward: logits and probabilities of every (sequence, head) [B, H, …], each head's
// query tiles one after another, tile t a contiguous [rows_t, kend_t] block with kend_t the keys
// any row of the tile sees (causal: r0 + rows_t, about half of n² per head; encoder: n, so a head
// is [n, n]). Row i holds its k(i) entries, then masked ones (logit −inf, probability 0) up to kend.
template <class T>
struct AttentionCache {
  std::vector<T> logits, probs;
};
// Entries of one head in AttentionCache, and where tile `tile` of a head starts.
std::size_t attention_cache_head_size(const AttentionShape& shape);
std::size_t attention_cache_tile_offset(const AttentionShape& shape, std::size_t tile);

// cache == nullptr: inference, memory O(tile · n) per thread instead of O(B·H·n²).
template <class T>
void attention_forward(T* out, const T* qkv, const AttentionShape& shape, const AttentionHeads& heads,
                       std::type_identity_t<AttentionCache<T>>* cache, AttentionObserver* observer);

// Backward of attention_forward (which must have kept its cache): dqkv [B, n, 3W] (overwritten) from
// dout [B, n, W] and the forward's qkv. dparams, if not null, [H, P] with P the heads' normaliser
// parameter count (Normaliser::parameter_names()), += Σ over sequences and rows of dL/dθ, summed in a
// fixed order; with heads.row_parameters, [B, H, n, P] instead, each row's own dL/dθ (overwritten).
// Serial (it runs inside a trainer's chunk); dq and dk are with respect to the rotated q, k.
template <class T>
void attention_backward(T* dqkv, const T* dout, const T* qkv, const AttentionShape& shape, const AttentionHeads& heads,
                        const AttentionCache<T>& cache, double* dparams);

// Statistics of one row (observer.hpp) from its k logits z and probabilities p.
template <class T>
AttentionRowStats attention_row_stats(const T* z, const T* p, std::size_t k, const norm::Normaliser& normaliser);

}  // namespace sharp::transformer

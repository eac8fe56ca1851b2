#pragma once
// Attention for long inputs with online row statistics (docs/science.md#streaming-entropy): keys are
// visited in blocks of kKeyBlock, each query row keeps (core/online_softmax.hpp) its running max m,
// s = Σ e^{β(z−m)},
// t = Σ β(z−m)·e^{β(z−m)} and Σ e^{β(z−m)} v, rescaled when m rises; out = Σ e^{β(z−m)} v / s. Memory
// O(kTileRows·(kKeyBlock + d_head)) per thread besides qkv and out: O(n·d) for a sequence, not O(n²).
// For the softmax family only (a normaliser with a temperature, normalisers/temperature.hpp), with
// β per row from the temperature: beta(k) (softmax's β, ssmax's s·ln k), or, for a temperature that
// needs the entropy pass (adaptive), two passes (the first finds the max, s, t at β = 1, hence
// H = ln s − t/s and β = beta_after(H); the second applies β with the max already final). Observer statistics come from the same sums: α_max = 1/s,
// α_min = e^{β(min z − m)}/s, H = ln s − t/s; support = k (every weight of a softmax is > 0).
// Shapes and tiles as attention_forward (attention.hpp); results equal it to rounding (≈1e-15 in
// double) and do not depend on the thread count. Float models weigh keys in float exp lanes
// (core/simd_exp.hpp; the row statistics stay in double): 1.3× the double lanes' speed at n = 2^14,
// results within 1e-5 of double attention on the same inputs.
#include <cstddef>

#include "normalisers/normaliser.hpp"
#include "transformer/attention.hpp"
#include "transformer/observer.hpp"

namespace sharp::transformer {

inline constexpr std::size_t kKeyBlock = 256;

// True for the normalisers blockwise attention handles: those with a temperature.
bool blockwise_supported(const norm::Normaliser& normaliser);

// Every head of `heads` must be blockwise_supported (else sharp::BadInput). The observer gets
// statistics only (AttentionTile::probabilities is nullptr even if it wants probabilities).
template <class T>
void attention_forward_blockwise(T* out, const T* qkv, const AttentionShape& shape, const AttentionHeads& heads,
                                 AttentionObserver* observer);

}  // namespace sharp::transformer

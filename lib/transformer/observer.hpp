#pragma once
// Measuring heads without storing n² maps (docs/science.md#measuring-heads): the forward pass hands
// an AttentionObserver, tile by tile, the statistics of every (sequence, layer, head, query row) —
// and the normalised rows themselves only if the observer asks for them.
#include <cstddef>
#include <cstdint>

namespace sharp::transformer {

// One query row of one head, in double, from the logits the normaliser saw (scaled by 1/√d_head,
// ALiBi bias included, only the row's k unmasked keys) and its output p.
struct AttentionRowStats {
  double logit_max = 0, logit_min = 0;  // max and min of the row's logits: δ_row = max − min
  double alpha_max = 0, alpha_min = 0;  // max and min of p over the k keys
  double entropy = 0;  // −Σ p ln p (nats, 0 ln 0 = 0)
  double entropy_before_beta = 0;  // −Σ q ln q of q = softmax(logits): the logits' own entropy,
      // before any normaliser's β (for softmax at β = 1, `entropy`
      // up to the rounding of p)
  double beta = 0;  // effective inverse temperature: softmax β, adaptive's β(H),
      // ssmax s·ln k; NaN for the other normalisers
  std::uint32_t keys = 0;  // k: keys the row attends over (causal: query index + 1)
  std::uint32_t support = 0;  // entries with p > 0
};

// A tile of consecutive query rows of one head. Rows are query positions first_row … first_row +
// rows − 1 of sequence `sequence` (index in the batch).
template <class T>
struct AttentionTile {
  std::size_t sequence = 0, layer = 0, head = 0, first_row = 0, rows = 0;
  const AttentionRowStats* stats = nullptr;  // [rows]
  const T* probabilities = nullptr;  // [rows, stride], row r's first stats[r].keys entries;
  std::size_t stride = 0;  // nullptr unless wants_probabilities()
};

// The input of layer `layer`'s attention (after LN1; the residual stream without LayerNorm): rows
// first_row … first_row + rows − 1 of the flattened [batch·length] tokens, `width` = d_model values each.
// Queries and keys are linear in it, which is what the weight-norm bound needs
// (docs/science.md#weight-norm-bound).
template <class T>
struct LayerInputChunk {
  std::size_t layer = 0, first_row = 0, rows = 0, width = 0;
  const T* values = nullptr;  // [rows, width]
};

// observe() is called once per tile, from the worker threads, possibly concurrently for different
// tiles (each (sequence, layer, head, row) is seen exactly once per forward pass): an observer
// writes each row's result to its own slot, or locks.
class AttentionObserver {
 public:
  virtual ~AttentionObserver() = default;
  virtual bool wants_probabilities() const { return false; }
  virtual void observe(const AttentionTile<float>& tile) {}
  virtual void observe(const AttentionTile<double>& tile) {}
  // Called once per chunk of rows of every layer, like observe() from the worker threads.
  virtual void observe_input(const LayerInputChunk<float>& chunk) {}
  virtual void observe_input(const LayerInputChunk<double>& chunk) {}
};

}  // namespace sharp::transformer

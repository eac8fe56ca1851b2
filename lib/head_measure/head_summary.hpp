#pragma once
// Per-head summaries of one forward pass (docs/science.md#measuring-heads), from a RowRecorder.
// "half" rows are the rows with k >= n/2 keys (short causal rows are sharp by construction; for an
// encoder every row has k = n); "last" is the last query row (k = n), averaged over the sequences.
// The lemma (docs/science.md#dispersion-lemma) is checked on every row whose normaliser has an
// effective β (softmax family): α_max·k ≤ exp(β·δ_row) and α_min·k ≥ exp(−β·δ_row), relative slack
// 1e-12; the lower bound only where exp(−β·δ_row)/k is a normal double (below that p underflows).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "head_measure/row_recorder.hpp"

namespace sharp::head_measure {

inline constexpr double kLemmaSlack = 1e-12;

struct HeadSummary {
  double delta_max = 0;  // max δ_row over every row and sequence (the head's sup δ at this n)
  double delta_half_max = 0, delta_half_mean = 0;
  double alpha_max_half_max = 0, alpha_max_half_mean = 0;
  double n_alpha_max_half_mean = 0;  // mean k·α_max over half rows: bounded for a dispersing head (the rate test)
  double entropy_half_mean = 0;  // mean H over half rows
  double entropy_gap_half = 0;  // mean (ln k − H) over half rows: 0 for uniform attention
  double entropy_all_mean = 0;  // mean H over every row (causal: compare with ln(n!)/n)
  double delta_last = 0, alpha_max_last = 0, alpha_min_last = 0, entropy_last = 0;
  double beta_last = 0;  // NaN for normalisers without an effective β
  double beta_max = 0;  // largest effective β over every row (NaN: none)
  double support_last = 0, support_half_mean = 0;
  std::int64_t lemma_rows = 0;  // rows checked (softmax family: all)
  std::int64_t lemma_violations_upper = 0, lemma_violations_lower = 0;
};

// Summaries [layers · heads], head h of layer l at l·heads + h. Sums run in row order.
std::vector<HeadSummary> summarise_heads(const RowRecorder& recorder);

// Several forward passes summarised as one (e.g. task prompts of different lengths, one pass each):
// maxima stay maxima (beta_max over the parts that have one, NaN when none has), counts add up, and
// every mean or last-row value is the mean over the parts weighted by `sequences` (the sequences
// each part holds), i.e. the mean over sequences of each sequence's value. parts[i] as
// summarise_heads returns them (all of one model: the same [layers · heads]).
std::vector<HeadSummary> combine_summaries(const std::vector<std::vector<HeadSummary>>& parts,
                                           const std::vector<double>& sequences);

// Uniform attention's entropy averaged over the query rows: causal rows see t = 1 … n keys, so
// mean_t ln t = ln(n!)/n; encoder rows see n keys, ln n.
double uniform_entropy_baseline(std::size_t n, bool causal);

}  // namespace sharp::head_measure

#pragma once
// What a text model is trained on (docs/science.md#algorithmic-text): a mix of algorithms, a set of
// lengths, traces on or off. Training draws (algorithm, length) uniformly over the allowed pairs
// (text/sample.hpp: length_refusal), then a fresh sample.
#include <cstdint>
#include <string>
#include <vector>

#include "text/sample.hpp"

namespace sharp::text_model {

struct TaskMix {
  std::vector<text::Algorithm> algorithms;
  std::vector<int> lengths;
  bool trace = false;
  // The allowed (algorithm, length) pairs; shape [pairs].
  std::vector<std::pair<text::Algorithm, int>> pairs() const;
};

// "minimum+binary_search" -> algorithms; throws BadInput for an unknown name or an empty mix.
std::vector<text::Algorithm> parse_algorithm_mix(const std::string& text);
// "4+5+7" -> lengths (the runner's in-point list separator); throws BadInput.
std::vector<int> parse_lengths(const std::string& text);

// Sample `index` of the mix's stream `key`: the pair from bits(key, index), the sample from
// draw_sample(key, algorithm, length, index).
text::Sample draw_mixed(const TaskMix& mix, std::uint64_t key, std::uint64_t index);

}  // namespace sharp::text_model

#pragma once
// The deterministic gradient reduction of the trainers: each fixed chunk of a batch writes its own
// gradient buffer; out[j] = Σ_c chunks[c][j] summed in chunk order in double, slices of the
// parameter vector on `threads` threads. Each element's sum runs in the same order whatever the
// thread count, so the result is bit-identical for any --threads.
#include <cstddef>
#include <vector>

namespace sharp::nn {

void sum_chunk_gradients(float* out, const std::vector<std::vector<float>>& chunks, std::size_t count, std::size_t size,
                         int threads);

// The same sum, which also leaves the chunks' first `size` entries zero (ready for the next step's
// accumulation, cleared while in cache instead of by a pass of its own) and returns the global norm
// ‖out‖₂: squares summed in double, eight interleaved partial sums per slice, slices added in slice
// order (bit-identical for any thread count).
double sum_and_clear_chunk_gradients(float* out, std::vector<std::vector<float>>& chunks, std::size_t count,
                                     std::size_t size, int threads);

}  // namespace sharp::nn

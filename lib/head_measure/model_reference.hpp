#pragma once
// The --checkpoint hook of sharp-transformer-dispersion (docs/architecture.md#checkpoints): a trained
// transformer named as FILE.h5 or FILE.h5#ID, from a result file of one of the trainers that write
// transformer models. No trainer of this suite writes them yet, so every reference is refused with
// the reason; the check is here so that the flag, its refusal of random-only parameters and its
// messages are in place when one does.
#include <optional>
#include <string>
#include <vector>

namespace sharp::head_measure {

// Experiments whose result files hold transformer models ("train-text": sharp-train-text).
const std::vector<std::string>& transformer_trainers();

// Why `reference` (FILE.h5 or FILE.h5#ID) names no readable transformer model, or nothing.
std::optional<std::string> transformer_reference_error(const std::string& reference);

}  // namespace sharp::head_measure

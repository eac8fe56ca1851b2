#pragma once
// The --checkpoint parameter shared by the experiments that read trained max-retrieval models
// (sharp-eval-max, sharp-fit-adaptive): a sharp-train-max result file, every model in it a value
// of the checkpoint axis, or FILE.h5#ID for one model.
#include <string>

#include "max_retrieval/model_file.hpp"
#include "runners/param_spec.hpp"

namespace sharp {

inline runner::ParamSpec checkpoint_param() {
  runner::ParamSpec checkpoint =
      runner::text_param("checkpoint", "results/train-max.h5", "trained models (a sharp-train-max result file)", {});
  checkpoint.allowed = "FILE.h5 (every model in it) or FILE.h5#ID";
  checkpoint.expand = max_retrieval::model_references;   // FILE.h5 -> FILE.h5#ID, one per model
  checkpoint.check = [](const runner::Value& v) {
    return max_retrieval::model_reference_error(std::get<std::string>(v));
  };
  return checkpoint;
}

}  // namespace sharp

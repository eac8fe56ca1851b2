#pragma once
// --describe: an experiment's declarations as one JSON object, for tools (scripts/results_readme.py
// writes results/README.md from it; the report reads units and meanings from it):
//   {"experiment", "binary", "summary", "notes",
//    "parameters": [{"name", "flag", "type", "default", "help", "allowed", "list"}],
//    "outputs": [{"name", "kind": "metric"|"array", "type": "real"|"integer", "shape": [...],
//                 "unit", "meaning", "items"}]}
// "list" is "grid", "single" or "in-point"; "shape" is [] for metrics; "items" says what a
// template's placeholder ranges over ("" for a literal name).
#include <string>
#include <vector>

#include "runners/experiment.hpp"

namespace sharp::runner {

std::string describe_json(const Experiment& experiment, const std::vector<ParamSpec>& params);

}  // namespace sharp::runner

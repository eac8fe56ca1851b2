#pragma once
// The whole main of an experiment binary: SHARP_EXPERIMENT_MAIN(BoundsExperiment).
#include "runners/experiment.hpp"

namespace sharp::runner {
// Parses the command line, runs the grid and maps errors to exit statuses (0/1/2/3) with one line.
int run_main(const Experiment& experiment, int argc, char** argv);
}  // namespace sharp::runner

#define SHARP_EXPERIMENT_MAIN(ExperimentClass)              \
  int main(int argc, char** argv) {                         \
    ExperimentClass experiment;                             \
    return sharp::runner::run_main(experiment, argc, argv); \
  }

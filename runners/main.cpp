#include "runners/main.hpp"

#include <cstdio>

#include "core/errors.hpp"
#include "h5/h5.hpp"
#include "runners/local_runner.hpp"
#include "runners/options.hpp"

namespace sharp::runner {

int run_main(const Experiment& experiment, int argc, char** argv) {
  const std::string prog = "sharp-" + experiment.name();
  try {
    const Invocation inv = parse_command_line(experiment, argc, argv);
    if (inv.help) {
      std::fputs(inv.help_text.c_str(), stdout);
      return kDone;
    }
    h5::SilenceErrors quiet;  // our errors carry the HDF5 stack; no second copy on stderr
    return run_local(experiment, *inv.grid, inv.options);
  } catch (const BadInput& e) {
    std::fprintf(stderr, "%s: error: %s\n", prog.c_str(), e.what());
    return kBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: failed: %s\n", prog.c_str(), e.what());
    return kFailed;
  }
}

}  // namespace sharp::runner

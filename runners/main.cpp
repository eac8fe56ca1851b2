#include "runners/main.hpp"

#include <hdf5.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/errors.hpp"
#include "core/simd_isa.hpp"
#include "h5/h5.hpp"
#include "runners/exit_status.hpp"
#include "runners/interrupt.hpp"
#include "runners/local_runner.hpp"
#include "runners/mpi_runner.hpp"
#include "runners/mpi_session.hpp"
#include "runners/options.hpp"

namespace sharp::runner {

int run_main(const Experiment& experiment, int argc, char** argv) {
  // HDF5's own exit handler closes whatever is still open; after a failed write (a full disk) that
  // is a file it cannot flush, and it crashed there. Every file is closed by its owner instead.
  H5dont_atexit();
  const std::string prog = "sharp-" + experiment.name();
  MpiSession mpi(&argc, &argv);  // a no-op unless a launcher started us
  // Under MPI every rank parses the same command line; rank 0 alone reports.
  const bool speaker = mpi.rank() == 0;
  try {
    if (mpi.active()) {
      if (const std::string wrong = mpi.check_rank_count(); !wrong.empty()) {
        const char* procid = std::getenv("SLURM_PROCID");
        if (!procid || std::string(procid) == "0") std::fprintf(stderr, "%s: error: %s\n", prog.c_str(), wrong.c_str());
        return kBadInput;
      }
    }
    active_simd_isa();  // a bad SHARP_SIMD is bad input, before anything runs (core/simd_isa.hpp)
    const Invocation inv = parse_command_line(experiment, argc, argv);
    if (inv.help) {
      if (speaker) std::fputs(inv.help_text.c_str(), stdout);
      return kDone;
    }
    h5::SilenceErrors quiet;  // our errors carry the HDF5 stack; no second copy on stderr
    InterruptHandlers handlers;  // SIGINT/SIGTERM: stop cleanly, exit 3 (docs/architecture.md#interrupts)
    if (mpi.active()) return run_mpi(experiment, *inv.grid, inv.options, mpi);
    return run_local(experiment, *inv.grid, inv.options);
  } catch (const BadInput& e) {
    if (speaker) std::fprintf(stderr, "%s: error: %s\n", prog.c_str(), e.what());
    return kBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: failed on rank %d: %s\n", prog.c_str(), mpi.rank(), e.what());
    if (mpi.active() && mpi.size() > 1) mpi.abort(kFailed);
    return kFailed;
  }
}

}  // namespace sharp::runner

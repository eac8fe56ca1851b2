#pragma once
// The shared flags of every experiment binary (docs/architecture.md#experiment-contract) and the parsed command line.
#include <optional>
#include <string>

#include "runners/experiment.hpp"
#include "runners/grid.hpp"
#include "runners/point_filter.hpp"

namespace sharp::runner {

struct Shard {
  int index = 0;  // I, from 0
  int count = 1;  // N
};

struct RunOptions {
  std::string out;  // merged result file PATH.h5; parts go to PATH.h5.parts/
  int threads = 1;  // OpenMP threads of this process
  std::optional<Shard> shard;  // run only shard I of N and never merge
  std::optional<PointFilter> only;  // run only these points and never merge into `out`
  std::string only_out;  // with `only`: merge those points into this file of their own
  bool merge_only = false;
  bool status = false;
  bool dry_run = false;
  bool quiet = false;
  bool keep_parts = false;  // keep PATH.h5.parts/ after a successful merge
  bool overwrite = false;  // replace a PATH.h5 that holds another configuration
  bool break_lock = false;  // take the output's lock even from a holder on another host
  double checkpoint_every = 600;  // seconds between checkpoints of long points
  std::string command_line;  // argv, shell-quoted, for provenance
  std::string scale = "custom";  // "quick" / "paper" from a config line '# scale: ...'; root attribute
};

struct Invocation {
  bool help = false;  // --help or --describe: print help_text and stop
  std::string help_text;
  RunOptions options;
  std::optional<Grid> grid;  // absent when help
};

// Parses argv (and --config FILE) against the experiment's parameters and the shared flags; checks
// every value, every point (Experiment::validate) and the output path. Throws BadInput with one
// line naming the flag and what is allowed. Writes nothing.
Invocation parse_command_line(const Experiment& experiment, int argc, const char* const* argv);

std::string shell_quote_command(int argc, const char* const* argv);

}  // namespace sharp::runner

#pragma once
// Command-line conveniences of the binaries that read trained models (sharp-eval-max,
// sharp-fit-adaptive), resolved before the runner parses the flags (the runner takes values as
// they are and has no hook to expand one value into several, nor lists inside a point):
//   --checkpoint FILE.h5   -> FILE.h5#ID,... for every model in the file (one grid value each);
//   --<list flag> a,b      -> a+b for the given flags (a list evaluated inside each point).
// Values come from the command line, or from --config FILE when the flag is not on the command
// line (command-line values win, as in the runner). With no --checkpoint anywhere, the default
// results/train-max.h5 is expanded.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sharp::max_retrieval {

inline constexpr char kInPointListSeparator = '+';

// "FILE.h5#ID" -> {FILE.h5, ID} (ID empty without '#').
std::pair<std::string, std::string> split_checkpoint(const std::string& value);
// Why a checkpoint value is unusable ("names no model of 'x.h5'", ...), or nothing when it is fine.
std::optional<std::string> checkpoint_value_error(const std::string& value);

class CheckpointCommandLine {
 public:
  CheckpointCommandLine(int argc, char** argv, std::vector<std::string> list_flags);
  void resolve();
  int argc() const { return int(args_.size()); }
  std::vector<char*> argv();   // null-terminated; valid while this object lives

  // FILE.h5 -> FILE.h5#ID,... (items with '#' are kept; an unreadable file becomes FILE.h5#, which
  // the parameter check then reports as one line).
  static std::string expand_checkpoints(const std::string& text);

 private:
  std::vector<std::string> args_;
  std::vector<std::string> list_flags_;
};

}  // namespace sharp::max_retrieval

#pragma once
// Output of the filter tools (sharp-normalise, sharp-text-sample) to stdout, every write checked: a
// full disk, /dev/full or a closed stdout is an error (exit 1, "cannot write to stdout"), never exit 0
// with the output cut. A large fwrite goes past stdio's buffer and fails itself; a small one fails only
// at the flush, so both are checked, and finish() flushes before the tool exits 0.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sharp::tools {

// Thrown when stdout takes less than it was given; the tools exit 1 with its text.
struct StdoutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void stdout_failed(int err) {
  throw StdoutError(std::string("cannot write to stdout: ") + (err ? std::strerror(err) : "write failed") +
                    " (the output is incomplete; free space or write elsewhere, then rerun)");
}

inline void write_stdout(std::string_view text) {
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::ferror(stdout)) stdout_failed(errno);
}

// The final flush: what stdio still holds reaches the file, or the tool fails.
inline void finish_stdout() {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) stdout_failed(errno);
}

// Text and the final flush in one: for a tool that prints one string and stops (--help, --list).
inline void print_stdout(std::string_view text) {
  write_stdout(text);
  finish_stdout();
}

}  // namespace sharp::tools

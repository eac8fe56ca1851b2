#pragma once
// One run per output at a time (docs/architecture.md#locking). An unsharded run and every merge
// hold PATH.h5.lock; shard I of N holds only PATH.h5.shard-I-of-N.lock, so the shards of a Slurm
// array share one --out. The lock is flock(2) on that file, which the kernel releases when the
// holder dies; the file also names its holder (pid, host, start time, command) for the message
// that refuses a second run (exit 2). A lock file whose holder is a dead process of this host is
// taken over; one naming another host is refused with how to clear it (--break-lock), since a
// process there cannot be checked from here. --break-lock never takes the lock of a holder alive on
// this host, and a lock file that is a symbolic link (or not a regular file) is refused, exit 2.
#include <optional>
#include <string>
#include <vector>

namespace sharp::runner {

struct LockHolder {
  long pid = 0;
  std::string host;
  std::string started;  // UTC, ISO 8601
  std::string command;
  std::string describe() const;  // "pid 123 on host n01 since 2026-01-01T10:00:00Z (sharp-bounds ...)"
};

// The lock file of a run: PATH.h5.lock, or PATH.h5.shard-I-of-N.lock for shard I of N.
std::string lock_path(const std::string& out, std::optional<std::pair<int, int>> shard);

class OutputLock {
 public:
  // Takes the lock or throws BadInput naming the holder and what to do. `what` names the run in
  // messages ("--out results/b.h5"); `break_lock` replaces a lock file held by anyone but a live
  // process of this host.
  OutputLock(const std::string& path, const std::string& what, const std::string& command, bool break_lock);
  ~OutputLock();  // releases the lock and removes the file
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool flock_works_ = true;
};

// True when some process holds the lock file `path` (flock); for cleanup that must not remove the
// parts of a shard still running. Fills `holder` when it can be read.
bool lock_is_held(const std::string& path, LockHolder* holder = nullptr);

// Shards of the output `out` whose lock is held right now: "2-of-8 (pid ... on host ...)"; for a
// merge or a cleanup that must not remove the parts of a shard still running.
std::vector<std::string> running_shards(const std::string& out);

std::string this_host();

}  // namespace sharp::runner

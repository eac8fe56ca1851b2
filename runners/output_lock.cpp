#include "runners/output_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "core/errors.hpp"
#include "runners/provenance.hpp"

namespace fs = std::filesystem;

namespace sharp::runner {
namespace {

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  off_t at = 0;
  for (ssize_t got; (got = ::pread(fd, buf, sizeof buf, at)) > 0 && text.size() < 65536; at += got)
    text.append(buf, std::size_t(got));
  return text;
}

// The lock file's text: "pid=...\nhost=...\nstarted=...\ncommand=...\n".
LockHolder parse_holder(const std::string& text) {
  LockHolder h;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "pid")
      h.pid = std::strtol(value.c_str(), nullptr, 10);
    else if (key == "host")
      h.host = value;
    else if (key == "started")
      h.started = value;
    else if (key == "command")
      h.command = value;
  }
  return h;
}

std::string holder_text(const std::string& command) {
  return "pid=" + std::to_string(::getpid()) + "\nhost=" + this_host() + "\nstarted=" + utc_now_iso() +
         "\ncommand=" + command + "\n";
}

void write_holder(int fd, const std::string& text) {
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != ssize_t(text.size()))
    throw std::runtime_error(std::string("cannot write the lock file: ") + std::strerror(errno));
}

bool alive_here(long pid) { return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM); }

// A holder that names a live process of this host: never taken over, not even with --break-lock
// (which is for holders that cannot be checked, on another host).
bool alive_on_this_host(const LockHolder& h) { return h.host == this_host() && alive_here(h.pid); }

// Opens (creating) the lock file itself, never a file a symbolic link points to: the run writes its
// name into the lock, and through a link it would overwrite whatever the link names.
int open_lock_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 && errno == ELOOP) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(path, ec).string();
    throw BadInput("the lock file " + path + " is a symbolic link" + (ec ? "" : " to " + target) +
                   "; a run writes its lock only into a file of its own: remove the link (rm " + path +
                   "), then rerun");
  }
  if (fd < 0) throw BadInput("cannot create the lock file " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw BadInput("the lock file " + path + " is not a regular file; remove it, then rerun");
  }
  return fd;
}

// The file at `path` is still the one `fd` has open (not unlinked and replaced by a releaser).
bool same_file(int fd, const std::string& path) {
  struct stat a {
  }, b{};
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

[[noreturn]] void refuse(const LockHolder& h, const std::string& what, const std::string& path, bool break_lock) {
  if (h.host.empty())
    throw BadInput(what + " is in use by another run (lock " + path + "); wait for it to finish, then rerun");
  if (h.host != this_host())
    throw BadInput(what + " is in use by " + h.describe() + " (lock " + path +
                   "); if that run is gone (its node "
                   "died), rerun with --break-lock");
  if (break_lock && alive_on_this_host(h))
    throw BadInput(what + " is in use by " + h.describe() + " (lock " + path +
                   "), which is alive on this host: "
                   "--break-lock takes only the lock of a run that is gone; wait for it or stop it (kill " +
                   std::to_string(h.pid) + "), then rerun the same command to resume");
  throw BadInput(what + " is in use by " + h.describe() + " (lock " + path +
                 "); wait for it or stop it, then "
                 "rerun the same command to resume");
}

}  // namespace

std::string LockHolder::describe() const {
  std::string s = "pid " + std::to_string(pid) + " on host " + host + " since " + started;
  if (!command.empty()) s += " (" + (command.size() > 120 ? command.substr(0, 117) + "..." : command) + ")";
  return s;
}

std::string this_host() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

std::string lock_path(const std::string& out, std::optional<std::pair<int, int>> shard) {
  if (!shard) return out + ".lock";
  return out + ".shard-" + std::to_string(shard->first) + "-of-" + std::to_string(shard->second) + ".lock";
}

OutputLock::OutputLock(const std::string& path, const std::string& what, const std::string& command, bool break_lock)
    : path_(path) {
  const std::string mine = holder_text(command);
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int fd = open_lock_file(path);
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (!same_file(fd, path)) {  // released and removed between our open and flock: try again
        ::close(fd);
        continue;
      }
      write_holder(fd, mine);
      fd_ = fd;
      return;
    }
    const int err = errno;
    LockHolder holder = parse_holder(read_all(fd));
    // The holder writes its name just after its flock succeeds: give it a moment, so that the
    // refusal can name it (two runs started together meet exactly in that window).
    for (int wait = 0; err == EWOULDBLOCK && holder.host.empty() && wait < 100; ++wait) {
      ::usleep(10000);
      holder = parse_holder(read_all(fd));
    }
    if (err == EWOULDBLOCK) {
      ::close(fd);
      // Held, but by a dead process of this host (a child that inherited the descriptor), or
      // the user breaks it (unless it is alive here): replace the file, whose old lock then guards nothing.
      const bool dead_here = holder.host == this_host() && holder.pid > 0 && !alive_here(holder.pid);
      if (dead_here || (break_lock && !alive_on_this_host(holder))) {
        if (break_lock && !dead_here)
          std::fprintf(stderr, "breaking the lock %s of %s\n", path.c_str(), holder.describe().c_str());
        ::unlink(path.c_str());
        break_lock = false;
        continue;
      }
      refuse(holder, what, path, break_lock);
    }
    // No flock on this file system (some network file systems): the file's text is the lock.
    flock_works_ = false;
    const bool free = holder.host.empty() || holder.pid == ::getpid() ||
                      (holder.host == this_host() && !alive_here(holder.pid)) ||
                      (break_lock && !alive_on_this_host(holder));
    if (!free) {
      ::close(fd);
      refuse(holder, what, path, break_lock);
    }
    write_holder(fd, mine);
    fd_ = fd;
    return;
  }
  throw BadInput("cannot take the lock " + path + ": it keeps being replaced by other runs");
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // before the unlock: a waiter that opened this file then sees it is gone
  ::close(fd_);
}

bool lock_is_held(const std::string& path, LockHolder* holder) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  bool held = false;
  if (::flock(fd, LOCK_SH | LOCK_NB) == 0) {
    ::flock(fd, LOCK_UN);
  } else {
    held = errno == EWOULDBLOCK;
  }
  if (held && holder) *holder = parse_holder(read_all(fd));
  ::close(fd);
  return held;
}

std::vector<std::string> running_shards(const std::string& out) {
  std::vector<std::string> running;
  const fs::path p = fs::absolute(out);
  const std::string prefix = p.filename().string() + ".shard-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(p.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.size() < prefix.size() + 5 || name.substr(name.size() - 5) != ".lock")
      continue;
    LockHolder holder;
    if (lock_is_held(entry.path().string(), &holder))
      running.push_back(name.substr(prefix.size(), name.size() - prefix.size() - 5) + " (" + holder.describe() + ")");
  }
  return running;
}

}  // namespace sharp::runner

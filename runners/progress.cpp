#include "runners/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace sharp::runner {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  if (s < 1) {
    char b[32];
    std::snprintf(b, sizeof b, "%.0f ms", s * 1e3);
    return b;
  }
  if (s < 60) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f s", s);
    return b;
  }
  const long t = std::lround(s);
  char b[32];
  if (t >= 3600)
    std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(b, sizeof b, "%ld:%02ld", t / 60, t % 60);
  return b;
}

Progress::Progress(std::size_t points, double total_cost, bool quiet)
    : points_(points),
      total_cost_(total_cost),
      quiet_(quiet),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {
  if (!quiet_ && tty_ && points_ > 0) draw_bar();
}

void Progress::draw_bar() {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double frac = points_ ? double(done_) / double(points_) : 1.0;
  const int width = 30, filled = int(std::lround(frac * width));
  std::string bar(filled, '#');
  bar += std::string(width - filled, '.');
  const double rate = elapsed > 0 ? done_ / elapsed : 0;
  const double eta = done_cost_ > 0 ? elapsed * (total_cost_ - done_cost_) / done_cost_ : NAN;
  std::fprintf(stderr, "\r[%s] %zu/%zu points  %.2f pt/s  elapsed %s  ETA %s   ", bar.c_str(), done_, points_, rate,
               format_duration(elapsed).c_str(), done_ ? format_duration(eta).c_str() : "?");
  std::fflush(stderr);
  bar_drawn_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void Progress::finished(const std::string& id, const std::string& description, double cost, double seconds) {
  std::lock_guard lock(mutex_);
  ++done_;
  done_cost_ += cost;
  if (quiet_) return;
  if (tty_) {
    if (done_ == points_ || std::chrono::steady_clock::now() - last_draw_ > std::chrono::milliseconds(100)) draw_bar();
  } else {
    std::fprintf(stderr, "[%zu/%zu] %s %s (%s)\n", done_, points_, id.c_str(), description.c_str(),
                 format_duration(seconds).c_str());
  }
}

void Progress::failed(const std::string& id, const std::string& description, const std::string& error) {
  std::lock_guard lock(mutex_);
  if (bar_drawn_) std::fprintf(stderr, "\n");
  bar_drawn_ = false;
  std::fprintf(stderr, "point %s (%s) failed: %s\n", id.c_str(), description.c_str(), error.c_str());
}

std::string format_point_progress(const std::string& id, const PointProgress& p, double elapsed) {
  const std::int64_t done_here = p.done - p.first;
  const double remaining = done_here > 0 ? elapsed * double(p.total - p.done) / double(done_here) : NAN;
  return id + " " + p.unit + " " + std::to_string(p.done) + "/" + std::to_string(p.total) + ": " + p.detail +
         "; elapsed " + format_duration(elapsed) + ", remaining " + (done_here > 0 ? format_duration(remaining) : "?");
}

void Progress::point_progress(const std::string& id, const PointProgress& progress, double elapsed_seconds) {
  std::lock_guard lock(mutex_);
  if (quiet_) return;
  if (bar_drawn_) std::fprintf(stderr, "\r\033[K");  // the line goes above the bar, which is redrawn
  std::fprintf(stderr, "%s\n", format_point_progress(id, progress, elapsed_seconds).c_str());
  if (bar_drawn_) draw_bar();
  std::fflush(stderr);
}

void Progress::close() {
  std::lock_guard lock(mutex_);
  if (bar_drawn_) std::fprintf(stderr, "\n");
  bar_drawn_ = false;
}

}  // namespace sharp::runner

#pragma once
// Progress of a run on stderr: a redrawn bar (points done, rate, ETA) on a terminal, one line per
// finished point otherwise (logs of batch jobs), and the lines long points report at their
// milestones (PointContext::report_progress); nothing with --quiet. Thread-safe.
#include <chrono>
#include <mutex>
#include <string>

#include "runners/experiment.hpp"

namespace sharp::runner {

class Progress {
 public:
  // total_cost: sum of the estimated costs of the points to run; the ETA weighs points by cost.
  Progress(std::size_t points, double total_cost, bool quiet);
  void finished(const std::string& id, const std::string& description, double cost, double seconds);
  void failed(const std::string& id, const std::string& description, const std::string& error);
  // A point's own progress line (format_point_progress), above the bar on a terminal.
  void point_progress(const std::string& id, const PointProgress& progress, double elapsed_seconds);
  void close();  // ends the bar's line

 private:
  void draw_bar();
  std::mutex mutex_;
  std::size_t points_, done_ = 0;
  double total_cost_, done_cost_ = 0;
  bool quiet_, tty_, bar_drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

std::string format_duration(double seconds);  // "1:02:03", "4:05", "12.3 s"
// "<id> step 500/3000: <detail>; elapsed 1:02, remaining 5:10" — the time remaining at the rate of
// this run (units done since `first` over the seconds elapsed), "?" before any unit is done.
std::string format_point_progress(const std::string& id, const PointProgress& progress, double elapsed_seconds);

}  // namespace sharp::runner

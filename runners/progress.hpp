#pragma once
// Progress of a run on stderr: a redrawn bar (points done, rate, ETA) on a terminal, one line per
// finished point otherwise (logs of batch jobs), nothing with --quiet. Thread-safe.
#include <chrono>
#include <mutex>
#include <string>

namespace sharp::runner {

class Progress {
public:
  // total_cost: sum of the estimated costs of the points to run; the ETA weighs points by cost.
  Progress(std::size_t points, double total_cost, bool quiet);
  void finished(const std::string& id, const std::string& description, double cost, double seconds);
  void failed(const std::string& id, const std::string& description, const std::string& error);
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

}  // namespace sharp::runner

#include "runners/local_runner.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include "runners/exit_status.hpp"
#include "runners/finish.hpp"
#include "runners/interrupt.hpp"
#include "runners/plan.hpp"
#include "runners/point_execution.hpp"
#include "runners/progress.hpp"

namespace sharp::runner {

int run_local(const Experiment& experiment, const Grid& grid, const RunOptions& options) {
  const RunPlan plan = plan_run(experiment, grid, options);
  if (plan.early_exit) return *plan.early_exit;
  const std::string parts_dir = options.out + ".parts";
  std::atomic<bool> failed{false}, disk_full{false};
  std::atomic<std::size_t> finished_now{0};
  if (!plan.todo.empty()) {
    const auto& todo = plan.todo;
    // Points in parallel, one thread each, when there are enough of them; otherwise the threads
    // are shared out inside the points. Either way the data are the same (docs/architecture.md#determinism).
    const int outer = static_cast<int>(std::min<std::size_t>(options.threads, todo.size()));
    const int inner = std::max(1, options.threads / outer);
    omp_set_max_active_levels(2);
    Progress progress(todo.size(), plan.total_cost, options.quiet);
#pragma omp parallel for num_threads(outer) schedule(dynamic, 1)
    for (std::size_t i = 0; i < todo.size(); ++i) {
      if (failed.load() || interrupted()) continue;  // stop dealing new points after a failure or signal
      const Point& p = *todo[i];
      const auto t0 = std::chrono::steady_clock::now();
      try {
        execute_point(experiment, grid, p, options, parts_dir, inner, &progress);
        ++finished_now;
        progress.finished(p.id, p.describe(), experiment.estimated_cost(p),
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      } catch (const PointInterrupted&) {
        // saved its checkpoint; it resumes from there
      } catch (const std::exception& e) {
        failed = true;
        if (is_disk_full(e.what())) disk_full = true;
        progress.failed(p.id, p.describe(), e.what());
      }
    }
    progress.close();
  }
  if (failed) {
    report_failure(experiment, options, plan, finished_now, disk_full);
    return kFailed;
  }
  if (interrupted()) return report_interrupt(experiment, plan, finished_now);
  try {
    return finish_run(experiment, grid, options, plan, 1);
  } catch (const std::exception& e) {
    if (!is_disk_full(e.what())) throw;
    std::fprintf(stderr, "sharp-%s: %s\n", experiment.name().c_str(), e.what());
    report_failure(experiment, options, plan, finished_now, true);
    return kFailed;
  }
}

}  // namespace sharp::runner

#include "runners/exit_status.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sharp::runner {

bool is_disk_full(const std::string& what) {
  return what.find(std::strerror(ENOSPC)) != std::string::npos || what.find(std::strerror(EDQUOT)) != std::string::npos;
}

int report_interrupt(const Experiment& experiment, const RunPlan& plan, std::size_t finished_now) {
  std::fprintf(stderr, "sharp-%s: interrupted: %zu of %zu points done, rerun the same command to resume\n",
               experiment.name().c_str(), plan.scope_done + finished_now, plan.scope);
  return kIncomplete;
}

void report_failure(const Experiment& experiment, const RunOptions& options, const RunPlan& plan,
                    std::size_t finished_now, bool disk_full) {
  const std::string parts_dir = options.out + ".parts";
  const std::size_t safe = plan.scope_done + finished_now;
  if (disk_full)
    std::fprintf(stderr,
                 "sharp-%s: the disk is full: %zu of %zu points are safe in %s (every file there is complete); "
                 "free space and rerun the same command to resume\n",
                 experiment.name().c_str(), safe, plan.scope, parts_dir.c_str());
  else
    std::fprintf(
        stderr,
        "sharp-%s: a point failed; %zu of %zu points are done and kept in %s, rerun the same command to resume\n",
        experiment.name().c_str(), safe, plan.scope, parts_dir.c_str());
}

}  // namespace sharp::runner

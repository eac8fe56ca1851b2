#pragma once
// How a run ends (docs/architecture.md#errors-and-exit-codes): its exit status, and the line on stderr that
// says what happened to the points when it did not finish.
#include <cstddef>
#include <string>

#include "runners/experiment.hpp"
#include "runners/options.hpp"
#include "runners/plan.hpp"

namespace sharp::runner {

enum ExitStatus { kDone = 0, kFailed = 1, kBadInput = 2, kIncomplete = 3 };

// After SIGINT/SIGTERM: "interrupted: K of N points done, rerun the same command to resume" on
// stderr; returns kIncomplete. `finished_now` points of plan.todo completed in this run.
int report_interrupt(const Experiment& experiment, const RunPlan& plan, std::size_t finished_now);

// After a failed point: says what failed and which points are safe (a full disk in so many words).
void report_failure(const Experiment& experiment, const RunOptions& options, const RunPlan& plan,
                    std::size_t finished_now, bool disk_full);

// True when an error's text says the disk (or quota) is full.
bool is_disk_full(const std::string& what);

}  // namespace sharp::runner

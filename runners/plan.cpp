#include "runners/plan.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "core/errors.hpp"
#include "runners/exit_status.hpp"
#include "runners/merge.hpp"
#include "runners/result_checksum.hpp"
#include "runners/resume.hpp"
#include "runners/shard_assignment.hpp"

namespace fs = std::filesystem;

namespace sharp::runner {
namespace {

// --dry-run: the points this run would compute, with their estimated costs.
void print_dry_run(const Experiment& e, const Grid& grid, const RunOptions& o) {
  std::printf("sharp-%s: %zu points, fingerprint %s, output %s\n", e.name().c_str(), grid.size(),
              grid.fingerprint().c_str(), o.out.c_str());
  const std::vector<int> shard = shard_owners(e, grid, o);
  for (const Point& p : grid.points()) {
    if (o.shard && shard[p.index] != o.shard->index) continue;
    if (o.only && !o.only->selects(p)) continue;
    std::printf("%6zu  %s  cost %-10.3g %s\n", p.index, p.id.c_str(), e.estimated_cost(p), p.describe().c_str());
  }
}

}  // namespace

RunPlan plan_run(const Experiment& experiment, const Grid& grid, const RunOptions& options) {
  RunPlan plan;
  const std::string parts_dir = options.out + ".parts";
  const std::string prog = "sharp-" + experiment.name();
  if (options.dry_run) {
    print_dry_run(experiment, grid, options);
    plan.early_exit = kDone;
    return plan;
  }
  // One run per output (--status only reads). The lock file goes beside PATH.h5.
  if (!options.status) {
    fs::create_directories(fs::absolute(options.out).parent_path());
    std::optional<std::pair<int, int>> shard;
    if (options.shard) shard = std::make_pair(options.shard->index, options.shard->count);
    const std::string what = "--out " + options.out +
                             (options.shard ? " (shard " + std::to_string(options.shard->index) + "/" +
                                                  std::to_string(options.shard->count) + ")"
                                            : "");
    plan.lock =
        std::make_shared<OutputLock>(lock_path(options.out, shard), what, options.command_line, options.break_lock);
    // A cleanup that was killed halfway is finished first.
    if (!options.shard) {
      std::error_code ec;
      fs::remove_all(parts_dir + ".deleting", ec);
    }
  }

  // A result file of this configuration makes the run a no-op; one of another configuration is
  // never replaced silently.
  const auto merged = complete_result_fingerprint(options.out, experiment.name());
  const bool damaged = merged && *merged == grid.fingerprint() && result_data_damaged(options.out);
  if (damaged && !options.overwrite)
    throw BadInput("--out: '" + options.out + "': " + std::string(kChecksumMismatch) +
                   "; move it aside, or pass --overwrite to compute it again");
  const bool stale = merged && *merged == grid.fingerprint() && !damaged && models_changed(grid, options.out);
  if (merged && *merged == grid.fingerprint() && !damaged && !stale) {
    if (!options.quiet || options.status)
      std::printf("%s: %s is complete and up to date (%zu points); nothing to do\n", prog.c_str(), options.out.c_str(),
                  grid.size());
    plan.early_exit = kDone;
    return plan;
  }
  std::error_code exists_ec;
  if (!merged && fs::exists(fs::symlink_status(options.out, exists_ec)) && !options.overwrite && !options.status)
    throw BadInput("--out: '" + options.out +
                   "' exists and is not a sharp result file; choose another --out, "
                   "or pass --overwrite to replace it");
  if (merged && *merged != grid.fingerprint() && !options.overwrite && !options.status)
    throw BadInput("--out: '" + options.out + "' holds another configuration (fingerprint " + *merged + ", this run " +
                   grid.fingerprint() + "); choose another --out, or pass --overwrite to replace it");

  const std::vector<int> shard_of = shard_owners(experiment, grid, options);
  const int my_shard = options.shard ? options.shard->index : 0;
  std::vector<bool> mine(grid.size());
  for (const Point& p : grid.points())
    mine[p.index] = shard_of[p.index] == my_shard && (!options.only || options.only->selects(p));
  // --status only reads: it neither reads parts through nor sets damaged ones aside.
  const PartsSurvey survey =
      survey_parts(grid, parts_dir, options.status ? std::vector<bool>(grid.size(), false) : mine, options,
                   options.overwrite && !options.status);
  plan.resumed = survey.n_complete;
  for (const Point& p : grid.points()) {
    plan.scope += mine[p.index];
    plan.scope_done += mine[p.index] && survey.complete[p.index];
  }

  if (options.status) {
    const std::vector<bool>& mine_of = mine;
    std::size_t mine = 0, mine_done = 0;
    for (const Point& p : grid.points()) {
      if (!mine_of[p.index]) continue;
      ++mine;
      mine_done += survey.complete[p.index];
      std::printf("%-8s  %s  %s\n", survey.complete[p.index] ? "complete" : "missing", p.id.c_str(),
                  p.describe().c_str());
    }
    std::printf("%s: %zu of %zu points complete, %zu missing%s (parts in %s)\n", prog.c_str(), mine_done, mine,
                mine - mine_done,
                options.shard  ? " in this shard"
                : options.only ? " among --only's"
                               : "",
                parts_dir.c_str());
    plan.early_exit = mine_done == mine ? kDone : kIncomplete;
    return plan;
  }

  if (options.merge_only) {
    if (survey.n_complete != grid.size()) {
      std::fprintf(stderr, "%s: cannot merge: %zu of %zu points are missing (see --status)\n", prog.c_str(),
                   grid.size() - survey.n_complete, grid.size());
      plan.early_exit = kIncomplete;
    }
    return plan;
  }

  // Points to run: incomplete, in this shard, most expensive first.
  for (const Point& p : grid.points())
    if (!survey.complete[p.index] && mine[p.index]) plan.todo.push_back(&p);
  std::stable_sort(plan.todo.begin(), plan.todo.end(), [&](const Point* a, const Point* b) {
    return experiment.estimated_cost(*a) > experiment.estimated_cost(*b);
  });
  for (const Point* p : plan.todo) plan.total_cost += experiment.estimated_cost(*p);
  if (!plan.todo.empty()) {
    fs::create_directories(parts_dir);
    clean_stale_temporaries(parts_dir, plan.todo);
  }
  return plan;
}

}  // namespace sharp::runner

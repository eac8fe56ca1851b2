#include "runners/finish.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "runners/exit_status.hpp"
#include "runners/merge.hpp"
#include "runners/output_lock.hpp"
#include "runners/point_filter.hpp"
#include "runners/resume.hpp"
#include "runners/shard_assignment.hpp"

namespace sharp::runner {
namespace {

// After an --only run: --out is never merged (a later run without --only resumes the points); with
// --only-out the selected points, once all are complete, become a result file of their own.
int finish_only(const Experiment& experiment, const Grid& grid, const RunOptions& options, const RunPlan& plan,
                int mpi_size) {
  const std::string parts_dir = options.out + ".parts";
  const std::string prog = "sharp-" + experiment.name();
  const PartsSurvey after = survey_parts(grid, parts_dir, std::vector<bool>(grid.size(), false), options, false);
  std::size_t missing = 0;
  for (const Point& p : grid.points()) missing += options.only->selects(p) && !after.complete[p.index];
  if (missing) return kIncomplete;
  if (!options.only_out.empty()) {
    const Grid selected = sub_grid(grid, *options.only);
    const auto merged = complete_result_fingerprint(options.only_out, experiment.name());
    if (!merged || *merged != selected.fingerprint()) {
      RunOptions sub = options;
      sub.out = options.only_out;
      clean_output_temporaries(sub.out);
      merge_points(experiment, selected, sub, parts_dir, mpi_size, grid.fingerprint());
    }
  }
  if (!options.quiet)
    std::printf("%s: the %zu points of --only %s are done (%zu run now)%s; %s is merged by a run without --only\n",
                prog.c_str(), plan.scope, options.only->describe().c_str(), plan.todo.size(),
                options.only_out.empty() ? "" : (", merged into " + options.only_out).c_str(), options.out.c_str());
  return kDone;
}

}  // namespace

int finish_run(const Experiment& experiment, const Grid& grid, const RunOptions& options, const RunPlan& plan,
               int mpi_size) {
  const std::string parts_dir = options.out + ".parts";
  const std::string prog = "sharp-" + experiment.name();
  if (options.shard) {
    const std::vector<int> shard_of = shard_owners(experiment, grid, options);
    std::vector<bool> none(grid.size(), false);  // just written: not read through again
    const PartsSurvey after = survey_parts(grid, parts_dir, none, options, false);
    std::size_t missing = 0;
    for (const Point& p : grid.points())
      missing += (shard_of[p.index] == options.shard->index && !after.complete[p.index]);
    if (!options.quiet)
      std::printf("%s: shard %d/%d done (%zu points run); merge with --merge-only when all shards finish\n",
                  prog.c_str(), options.shard->index, options.shard->count, plan.todo.size());
    return missing == 0 ? kDone : kIncomplete;
  }
  if (options.only) return finish_only(experiment, grid, options, plan, mpi_size);
  clean_output_temporaries(options.out);
  merge_points(experiment, grid, options, parts_dir, mpi_size);
  if (!options.keep_parts) {
    const std::vector<std::string> shards = running_shards(options.out);
    if (shards.empty())
      remove_parts_dir(parts_dir);
    else
      std::fprintf(stderr, "%s: keeping %s: shard %s is running\n", prog.c_str(), parts_dir.c_str(),
                   shards.front().c_str());
  }
  if (!options.quiet)
    std::printf("%s: wrote %s (%zu points; %zu run now, %zu resumed from earlier runs)\n", prog.c_str(),
                options.out.c_str(), grid.size(), plan.todo.size(), plan.resumed);
  return kDone;
}

}  // namespace sharp::runner

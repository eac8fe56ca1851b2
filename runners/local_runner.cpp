#include "runners/local_runner.hpp"

#include <omp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <numeric>

#include "core/errors.hpp"
#include "core/hash.hpp"
#include "h5/h5.hpp"
#include "runners/fault_injection.hpp"
#include "runners/interrupt.hpp"
#include "runners/merge.hpp"
#include "runners/point_file.hpp"
#include "runners/progress.hpp"
#include "runners/provenance.hpp"
#include "runners/result_checksum.hpp"
#include "runners/result_reader.hpp"

namespace fs = std::filesystem;

namespace sharp::runner {
namespace {

// HDF5 calls from the runner are serialised: cheap next to the points, and safe whatever the build.
std::mutex& h5_mutex() {
  static std::mutex m;
  return m;
}

// A checkpoint that cannot be used is set aside beside itself (never deleted: it may be evidence),
// named on stderr, and the point starts from the beginning.
void set_aside(const std::string& point_id, const std::string& path, const std::string& reason) {
  const std::string aside = set_checkpoint_aside(path);
  std::fprintf(stderr, "point %s: checkpoint %s cannot be used: %s; set aside as %s, the point restarts from step 0\n",
               point_id.c_str(), path.c_str(), reason.c_str(), aside.c_str());
}

class LocalPointContext final : public PointContext {
public:
  LocalPointContext(const Experiment& e, const Point& p, const std::string& parts_dir, int threads,
                    double checkpoint_every, Progress* progress, bool quiet)
      : experiment_(e), point_(p), ckpt_(checkpoint_path(parts_dir, p.id)), threads_(threads),
        every_(checkpoint_every), last_save_(std::chrono::steady_clock::now()), start_(last_save_),
        progress_(progress), quiet_(quiet) {
    for (const StreamSpec& s : e.streams()) keys_[s.name] = runner::stream_key(e.name(), s, p);
  }
  int threads() const override { return threads_; }
  std::uint64_t stream_key(const std::string& stream) const override {
    auto it = keys_.find(stream);
    if (it == keys_.end())
      throw std::logic_error("experiment " + experiment_.name() + " uses undeclared random stream '" + stream + "'");
    return it->second;
  }
  std::optional<CheckpointState> load_checkpoint() override {
    std::lock_guard lock(h5_mutex());
    try {
      return read_checkpoint(ckpt_, point_.id);
    } catch (const BadCheckpoint& e) {
      set_aside(point_.id, ckpt_, e.what());
      return std::nullopt;
    }
  }
  const std::string& checkpoint_file() const { return ckpt_; }
  // After SIGINT/SIGTERM a checkpoint is due at once, and the point stops once it is saved.
  void save_checkpoint(const CheckpointState& state) override {
    {
      std::lock_guard lock(h5_mutex());
      write_checkpoint(ckpt_, point_.id, state);
    }
    last_save_ = std::chrono::steady_clock::now();
    if (interrupted()) throw PointInterrupted();
    stall_if_injected(point_.id, StallStage::after_checkpoint);
  }
  bool checkpoint_due() const override {
    return interrupted() ||
           std::chrono::duration<double>(std::chrono::steady_clock::now() - last_save_).count() >= every_;
  }
  // Through the run's progress display; an MPI worker (no display) prints the line itself.
  void report_progress(const PointProgress& p) override {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (progress_) progress_->point_progress(point_.id, p, elapsed);
    else if (!quiet_) std::fprintf(stderr, "%s\n", format_point_progress(point_.id, p, elapsed).c_str());
  }

private:
  const Experiment& experiment_;
  const Point& point_;
  std::string ckpt_;
  int threads_;
  double every_;
  std::chrono::steady_clock::time_point last_save_, start_;
  Progress* progress_;
  bool quiet_;
  std::map<std::string, std::uint64_t> keys_;
};

// The pid in a temporary's name "<final>.tmp.<pid>.<counter>" is alive on this host: another
// process (a concurrent run of the same grid) is still writing it.
bool writer_alive(const std::string& name) {
  const auto tmp = name.rfind(".tmp.");
  if (tmp == std::string::npos) return false;
  const long pid = std::strtol(name.c_str() + tmp + 5, nullptr, 10);
  return pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) == 0;
}

// Removes temporaries (<name>.tmp.*) left by killed runs for the given points' files.
void clean_stale_temporaries(const std::string& parts_dir, const std::vector<const Point*>& points) {
  std::error_code ec;
  if (!fs::is_directory(parts_dir, ec)) return;
  std::map<std::string, bool> mine;
  for (const Point* p : points) mine[p->id] = true;
  for (const auto& entry : fs::directory_iterator(parts_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!h5::is_atomic_temp_name(name) || name.size() < 16 || writer_alive(name)) continue;
    if (mine.count(name.substr(0, 16))) fs::remove(entry.path(), ec);
  }
}

void clean_output_temporaries(const std::string& out) {
  const fs::path p = fs::absolute(out);
  std::error_code ec;
  if (!fs::is_directory(p.parent_path(), ec)) return;
  const std::string prefix = p.filename().string() + ".tmp.";
  for (const auto& entry : fs::directory_iterator(p.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && h5::is_atomic_temp_name(name) && !writer_alive(name)) fs::remove(entry.path(), ec);
  }
}

struct PartsSurvey {
  std::vector<bool> complete;  // per grid point
  std::size_t n_complete = 0;
};

// Shards of this output whose lock is held right now: "shard 2/8 (pid ... on host ...)".
std::vector<std::string> running_shards(const std::string& out) {
  std::vector<std::string> running;
  const fs::path p = fs::absolute(out);
  const std::string prefix = p.filename().string() + ".shard-";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(p.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.size() < prefix.size() + 5 || name.substr(name.size() - 5) != ".lock") continue;
    LockHolder holder;
    if (lock_is_held(entry.path().string(), &holder))
      running.push_back(name.substr(prefix.size(), name.size() - prefix.size() - 5) + " (" + holder.describe() + ")");
  }
  return running;
}

// Removes a parts directory resumably: renamed to PATH.h5.parts.deleting first, so that a kill
// halfway leaves a name that no run reads as parts, and the next run finishes the deletion.
void remove_parts_dir(const std::string& parts_dir) {
  const std::string deleting = parts_dir + ".deleting";
  std::error_code ec;
  fs::remove_all(deleting, ec);
  if (fs::exists(parts_dir, ec)) {
    fs::rename(parts_dir, deleting, ec);
    if (ec) throw std::runtime_error("cannot rename '" + parts_dir + "' to '" + deleting + "': " + ec.message());
  }
  kill_cleanup_if_injected(deleting);
  fs::remove_all(deleting, ec);
  if (ec) throw std::runtime_error("cannot remove '" + deleting + "': " + ec.message());
}

// Which points have complete, sound part files (only those of `mine` are read through and checked
// against their checksum; a damaged one is renamed <id>.h5.bad, reported, and runs again). Parts of
// another configuration are refused, or removed with --overwrite when no shard is running.
PartsSurvey survey_parts(const Grid& grid, const std::string& parts_dir, const std::vector<bool>& mine,
                         const RunOptions& options, bool clear_foreign) {
  PartsSurvey plan;
  plan.complete.assign(grid.size(), false);
  std::error_code ec;
  if (!fs::is_directory(parts_dir, ec)) return plan;
  std::map<std::string, std::size_t> index;
  for (const Point& p : grid.points()) index[p.id] = p.index;
  // Complete part files and their fingerprints.
  std::vector<std::pair<fs::path, std::string>> parts;
  for (const auto& entry : fs::directory_iterator(parts_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() != 19 || name.substr(16) != ".h5") continue;  // <16 hex>.h5
    if (auto fp = complete_part_fingerprint(entry.path().string())) parts.emplace_back(entry.path(), *fp);
  }
  // Another configuration: a part of another fingerprint that names no point of this grid. (One that
  // names a point of this grid with another fingerprint is a damaged part, set aside below: it must
  // not condemn, nor with --overwrite delete, every finished part.) Decided before anything is moved.
  for (const auto& [path, fp] : parts) {
    if (fp == grid.fingerprint() || index.count(path.filename().string().substr(0, 16))) continue;
    const std::vector<std::string> shards = running_shards(options.out);
    if (!clear_foreign || !shards.empty())
      throw BadInput("'" + parts_dir + "' holds point files of another configuration (fingerprint " + fp +
                     ", this run " + grid.fingerprint() + ")" +
                     (shards.empty() ? "; use another --out, or --overwrite to remove them"
                                     : "; shard " + shards.front() + " is still writing there"));
    std::fprintf(stderr, "removing %s: point files of another configuration (--overwrite)\n", parts_dir.c_str());
    remove_parts_dir(parts_dir);
    return survey_parts(grid, parts_dir, mine, options, false);
  }
  for (const auto& [path, fp] : parts) {
    const std::string name = path.filename().string();
    auto it = index.find(name.substr(0, 16));
    if (it == index.end() || plan.complete[it->second]) continue;
    if (fp != grid.fingerprint() && !mine[it->second]) continue;  // not complete; its shard sets it aside
    if (mine[it->second]) {
      std::optional<std::string> damage;
      if (fp != grid.fingerprint())
        damage = "its fingerprint " + fp + " is not this configuration's (" + grid.fingerprint() +
                 "; damaged, or written by a run of another grid)";
      else
        damage = part_damage(path.string(), name.substr(0, 16));
      if (damage) {
        std::fprintf(stderr, "point %s: part file %s is damaged: %s; it runs again (kept as %s.bad)\n",
                     name.substr(0, 16).c_str(), path.c_str(), damage->c_str(), name.c_str());
        fs::rename(path, path.string() + ".bad", ec);
        continue;
      }
      // Scored on another model than the one the point names now (the file was retrained or replaced).
      const std::string* model = model_fingerprint_of(grid.points()[it->second]);
      if (model && part_model_fingerprint(path.string()) != *model) {
        std::fprintf(stderr, "point %s: model changed since this point was scored: rerunning (%s kept as %s.old-model)\n",
                     name.substr(0, 16).c_str(), path.c_str(), name.c_str());
        fs::rename(path, path.string() + ".old-model", ec);
        continue;
      }
    }
    plan.complete[it->second] = true;
    ++plan.n_complete;
  }
  return plan;
}

// True when a point of the merged file `out` (of this grid) was scored on another model than the one
// it names now; says so for each such point.
bool models_changed(const Grid& grid, const std::string& out) {
  if (grid.points().empty() || !model_fingerprint_of(grid.points()[0])) return false;
  const ResultFile merged = ResultFile::open(out);
  bool changed = false;
  for (const Point& p : grid.points()) {
    const std::string* model = model_fingerprint_of(p);
    const auto params = merged.has(p.id) ? merged.params(p.id) : std::map<std::string, Value>{};
    const auto stored = params.find(kModelFingerprint);
    if (!model || (stored != params.end() && std::get<std::string>(stored->second) == *model)) continue;
    std::fprintf(stderr, "point %s: model changed since this point was scored: rerunning\n", p.id.c_str());
    changed = true;
  }
  return changed;
}

// The shard of every grid point under --shard I/N (all 0 without it).
std::vector<int> shard_owners(const Experiment& e, const Grid& grid, const RunOptions& o) {
  if (!o.shard) return std::vector<int>(grid.size(), 0);
  std::vector<double> costs;
  for (const Point& p : grid.points()) costs.push_back(e.estimated_cost(p));
  return assign_shards(costs, o.shard->count);
}

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

std::uint64_t stream_key(const std::string& experiment, const StreamSpec& stream, const Point& point) {
  std::vector<std::string> deps = stream.depends_on;
  std::sort(deps.begin(), deps.end());
  std::string text = "stream=" + experiment + "/" + stream.name + "\nseed=" + canonical(point.value("seed"));
  for (const std::string& d : deps)
    if (d != "seed") text += "\n" + d + "=" + canonical(point.value(d));
  return hash64(text);
}

std::vector<int> assign_shards(const std::vector<double>& costs, int shards) {
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  std::vector<double> load(shards, 0.0);
  std::vector<int> owner(costs.size(), 0);
  for (std::size_t i : order) {
    const int s = int(std::min_element(load.begin(), load.end()) - load.begin());
    owner[i] = s;
    load[s] += costs[i];
  }
  return owner;
}

void execute_point(const Experiment& experiment, const Grid& grid, const Point& point,
                   const RunOptions& options, const std::string& parts_dir, int threads, Progress* progress) {
  PointTiming timing;
  timing.created = utc_now_iso();
  timing.threads = threads;
  const auto start = std::chrono::steady_clock::now();
  LocalPointContext ctx(experiment, point, parts_dir, threads, options.checkpoint_every, progress, options.quiet);
  fail_if_injected(point.id);
  stall_if_injected(point.id, StallStage::before_start);
  // A point that finds its loaded state inconsistent (BadCheckpoint) runs again from the start.
  auto run = [&] {
    try {
      return experiment.run(point, ctx);
    } catch (const BadCheckpoint& e) {
      {
        std::lock_guard lock(h5_mutex());
        set_aside(point.id, ctx.checkpoint_file(), e.what());
      }
      return experiment.run(point, ctx);
    }
  };
  const Record record = inject_output_fault(run());
  check_record(experiment.name(), experiment.outputs(), point, record);
  timing.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  timing.peak_rss_bytes = peak_rss_bytes();
  timing.finished = utc_now_iso();
  std::lock_guard lock(h5_mutex());
  write_point_file(part_path(parts_dir, point.id), experiment.name(), grid.fingerprint(), point, record, timing);
  std::error_code ec;
  fs::remove(checkpoint_path(parts_dir, point.id), ec);
}

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
        (options.shard ? " (shard " + std::to_string(options.shard->index) + "/" + std::to_string(options.shard->count) + ")" : "");
    plan.lock = std::make_shared<OutputLock>(lock_path(options.out, shard), what, options.command_line, options.break_lock);
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
      std::printf("%s: %s is complete and up to date (%zu points); nothing to do\n", prog.c_str(),
                  options.out.c_str(), grid.size());
    plan.early_exit = kDone;
    return plan;
  }
  std::error_code exists_ec;
  if (!merged && fs::exists(fs::symlink_status(options.out, exists_ec)) && !options.overwrite && !options.status)
    throw BadInput("--out: '" + options.out + "' exists and is not a sharp result file; choose another --out, "
                   "or pass --overwrite to replace it");
  if (merged && *merged != grid.fingerprint() && !options.overwrite && !options.status)
    throw BadInput("--out: '" + options.out + "' holds another configuration (fingerprint " + *merged +
                   ", this run " + grid.fingerprint() + "); choose another --out, or pass --overwrite to replace it");

  const std::vector<int> shard_of = shard_owners(experiment, grid, options);
  const int my_shard = options.shard ? options.shard->index : 0;
  std::vector<bool> mine(grid.size());
  for (const Point& p : grid.points())
    mine[p.index] = shard_of[p.index] == my_shard && (!options.only || options.only->selects(p));
  // --status only reads: it neither reads parts through nor sets damaged ones aside.
  const PartsSurvey survey = survey_parts(grid, parts_dir, options.status ? std::vector<bool>(grid.size(), false) : mine,
                                          options, options.overwrite && !options.status);
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
      std::printf("%-8s  %s  %s\n", survey.complete[p.index] ? "complete" : "missing", p.id.c_str(), p.describe().c_str());
    }
    std::printf("%s: %zu of %zu points complete, %zu missing%s (parts in %s)\n", prog.c_str(), mine_done, mine,
                mine - mine_done, options.shard ? " in this shard" : options.only ? " among --only's" : "",
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

// After an --only run: --out is never merged (a later run without --only resumes the points); with
// --only-out the selected points, once all are complete, become a result file of their own.
static int finish_only(const Experiment& experiment, const Grid& grid, const RunOptions& options, const RunPlan& plan,
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

int finish_run(const Experiment& experiment, const Grid& grid, const RunOptions& options, const RunPlan& plan,
               int mpi_size) {
  const std::string parts_dir = options.out + ".parts";
  const std::string prog = "sharp-" + experiment.name();
  if (options.shard) {
    const std::vector<int> shard_of = shard_owners(experiment, grid, options);
    std::vector<bool> none(grid.size(), false);  // just written: not read through again
    const PartsSurvey after = survey_parts(grid, parts_dir, none, options, false);
    std::size_t missing = 0;
    for (const Point& p : grid.points()) missing += (shard_of[p.index] == options.shard->index && !after.complete[p.index]);
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
    if (shards.empty()) remove_parts_dir(parts_dir);
    else std::fprintf(stderr, "%s: keeping %s: shard %s is running\n", prog.c_str(), parts_dir.c_str(), shards.front().c_str());
  }
  if (!options.quiet)
    std::printf("%s: wrote %s (%zu points; %zu run now, %zu resumed from earlier runs)\n", prog.c_str(),
                options.out.c_str(), grid.size(), plan.todo.size(), plan.resumed);
  return kDone;
}

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
    std::fprintf(stderr, "sharp-%s: a point failed; %zu of %zu points are done and kept in %s, rerun the same command to resume\n",
                 experiment.name().c_str(), safe, plan.scope, parts_dir.c_str());
}

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

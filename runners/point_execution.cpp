#include "runners/point_execution.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/errors.hpp"
#include "core/hash.hpp"
#include "runners/fault_injection.hpp"
#include "runners/interrupt.hpp"
#include "runners/point_file.hpp"
#include "runners/progress.hpp"
#include "runners/provenance.hpp"

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

// What a point sees of the runner, whichever runner: its checkpoint file beside its part file, its
// random streams, the progress display.
class RunnerPointContext final : public PointContext {
 public:
  RunnerPointContext(const Experiment& e, const Point& p, const std::string& parts_dir, int threads,
                     double checkpoint_every, Progress* progress, bool quiet)
      : experiment_(e),
        point_(p),
        ckpt_(checkpoint_path(parts_dir, p.id)),
        threads_(threads),
        every_(checkpoint_every),
        last_save_(std::chrono::steady_clock::now()),
        start_(last_save_),
        progress_(progress),
        quiet_(quiet) {
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
    if (progress_)
      progress_->point_progress(point_.id, p, elapsed);
    else if (!quiet_)
      std::fprintf(stderr, "%s\n", format_point_progress(point_.id, p, elapsed).c_str());
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

}  // namespace

std::uint64_t stream_key(const std::string& experiment, const StreamSpec& stream, const Point& point) {
  std::vector<std::string> deps = stream.depends_on;
  std::sort(deps.begin(), deps.end());
  std::string text = "stream=" + experiment + "/" + stream.name + "\nseed=" + canonical(point.value("seed"));
  for (const std::string& d : deps)
    if (d != "seed") text += "\n" + d + "=" + canonical(point.value(d));
  return hash64(text);
}

void execute_point(const Experiment& experiment, const Grid& grid, const Point& point, const RunOptions& options,
                   const std::string& parts_dir, int threads, Progress* progress) {
  PointTiming timing;
  timing.created = utc_now_iso();
  timing.threads = threads;
  const auto start = std::chrono::steady_clock::now();
  RunnerPointContext ctx(experiment, point, parts_dir, threads, options.checkpoint_every, progress, options.quiet);
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

}  // namespace sharp::runner

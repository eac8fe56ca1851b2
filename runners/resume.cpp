#include "runners/resume.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>

#include "core/errors.hpp"
#include "h5/h5.hpp"
#include "runners/fault_injection.hpp"
#include "runners/output_lock.hpp"
#include "runners/point_file.hpp"
#include "runners/result_reader.hpp"

namespace fs = std::filesystem;

namespace sharp::runner {
namespace {

// The pid in a temporary's name "<final>.tmp.<pid>.<counter>" is alive on this host: another
// process (a concurrent run of the same grid) is still writing it.
bool writer_alive(const std::string& name) {
  const auto tmp = name.rfind(".tmp.");
  if (tmp == std::string::npos) return false;
  const long pid = std::strtol(name.c_str() + tmp + 5, nullptr, 10);
  return pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) == 0;
}

}  // namespace

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
    if (name.rfind(prefix, 0) == 0 && h5::is_atomic_temp_name(name) && !writer_alive(name))
      fs::remove(entry.path(), ec);
  }
}

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
        std::fprintf(stderr,
                     "point %s: model changed since this point was scored: rerunning (%s kept as %s.old-model)\n",
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

}  // namespace sharp::runner

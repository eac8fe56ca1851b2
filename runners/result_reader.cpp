#include "runners/result_reader.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <tuple>

#include "core/errors.hpp"
#include "h5/h5.hpp"
#include "runners/grid.hpp"
#include "runners/result_checksum.hpp"

namespace sharp::runner {
namespace {

std::string quoted(const std::string& path) { return "'" + path + "'"; }

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return s;
}

Array read_array(const h5::Group& g, const std::string& name) {
  Array a;
  if (g.dataset_kind(name) == h5::Group::Kind::Integer)
    a.data = g.read<std::int64_t>(name, &a.shape);
  else
    a.data = g.read<double>(name, &a.shape);
  return a;
}

// The checksum verdict of each file this process read (its note, "" when verified), keyed by path
// and by what changes when the file is replaced or written: an evaluation grid opens one training
// file once per point and value check, and reads it through once.
std::string checked_note(const h5::Group& root, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::string(verify_result_checksum(root, path).value_or(""));
  using Key = std::tuple<std::string, dev_t, ino_t, off_t, long, long>;
  static std::mutex mutex;
  static std::map<Key, std::string> verified;
  const Key key{path, st.st_dev, st.st_ino, st.st_size, long(st.st_mtim.tv_sec), long(st.st_mtim.tv_nsec)};
  {
    std::lock_guard lock(mutex);
    if (auto it = verified.find(key); it != verified.end()) return it->second;
  }
  const std::string note = verify_result_checksum(root, path).value_or("");
  if (!note.empty()) std::fprintf(stderr, "note: %s: %s\n", quoted(path).c_str(), note.c_str());
  std::lock_guard lock(mutex);
  verified[key] = note;
  return note;
}

}  // namespace

ResultFile ResultFile::open(const std::string& path, const std::vector<std::string>& experiments) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw BadInput(quoted(path) + " does not exist");
  h5::SilenceErrors quiet;
  ResultFile r;
  r.path_ = path;
  try {
    if (!h5::is_complete(path))
      throw BadInput(quoted(path) + " is not a complete result file (rerun the command that makes it to finish it)");
    auto file = std::make_shared<h5::File>(h5::File::open_read(path));
    const h5::Group& root = file->root();
    // A point file of PATH.h5.parts/ (runners/point_file.hpp) is not a result: say so, not "no /config".
    if (root.has_attr("fingerprint") && root.exists("params") && !root.exists("points"))
      throw BadInput(quoted(path) +
                     " is a part file of an unfinished run, not a merged result; finish the run "
                     "(rerun its command, or --merge-only) and give the merged FILE.h5 (or FILE.h5#ID for one point)");
    const std::string schema = root.has_attr("schema") ? root.attr_string("schema") : "?";
    if (schema != kSchema) throw BadInput(quoted(path) + " is of schema '" + schema + "', not " + kSchema);
    r.experiment_ = root.has_attr("experiment") ? root.attr_string("experiment") : "?";
    if (!experiments.empty() && std::find(experiments.begin(), experiments.end(), r.experiment_) == experiments.end())
      throw BadInput(quoted(path) + " holds experiment '" + r.experiment_ + "', not " + joined(experiments));
    r.note_ = checked_note(root, path);
    r.config_ = root.read_string("config");
    r.ids_ = root.read_strings("points/id");
    for (std::size_t i = 0; i < r.ids_.size(); ++i) r.rows_[r.ids_[i]] = i;
    const h5::Group params = root.open_group("points/params");
    for (const std::string& name : params.children()) {
      std::vector<Value>& column = r.params_[name];
      switch (params.dataset_kind(name)) {
        case h5::Group::Kind::Integer:
          for (std::int64_t v : params.read<std::int64_t>(name)) column.emplace_back(v);
          break;
        case h5::Group::Kind::Float:
          for (double v : params.read<double>(name)) column.emplace_back(v);
          break;
        default:
          for (std::string& v : params.read_strings(name)) column.emplace_back(std::move(v));
      }
    }
    const h5::Group points = root.open_group("points");
    for (const std::string& name : points.children()) {
      if (name == "id" || name == "params") continue;
      std::vector<Metric>& column = r.metrics_[name];
      if (points.dataset_kind(name) == h5::Group::Kind::Integer)
        for (std::int64_t v : points.read<std::int64_t>(name)) column.emplace_back(v);
      else
        for (double v : points.read<double>(name)) column.emplace_back(v);
    }
    r.file_ = std::move(file);
  } catch (const h5::Error& e) {
    throw BadInput(quoted(path) + " cannot be read as a result file: " + e.what());
  }
  return r;
}

std::size_t ResultFile::row(const std::string& id) const {
  const auto it = rows_.find(id);
  if (it == rows_.end()) throw BadInput(quoted(path_) + " has no point with id '" + id + "'");
  return it->second;
}

bool ResultFile::has(const std::string& id) const { return rows_.count(id) != 0; }

std::map<std::string, Value> ResultFile::params(const std::string& id) const {
  const std::size_t i = row(id);
  std::map<std::string, Value> out;
  for (const auto& [name, column] : params_) out[name] = column.at(i);
  return out;
}

std::map<std::string, Metric> ResultFile::metrics(const std::string& id) const {
  const std::size_t i = row(id);
  std::map<std::string, Metric> out;
  for (const auto& [name, column] : metrics_) out[name] = column.at(i);
  return out;
}

std::vector<std::string> ResultFile::arrays(const std::string& id) const {
  row(id);
  h5::SilenceErrors quiet;
  const h5::Group& root = file_->root();
  if (!root.exists("arrays/" + id)) return {};
  return root.open_group("arrays/" + id).children();
}

Array ResultFile::array(const std::string& id, const std::string& name) const {
  row(id);
  h5::SilenceErrors quiet;
  const h5::Group& root = file_->root();
  if (!root.exists("arrays/" + id) || !root.open_group("arrays/" + id).exists(name))
    throw BadInput("point '" + id + "' of " + quoted(path_) + " has no array '" + name + "'");
  try {
    return read_array(root.open_group("arrays/" + id), name);
  } catch (const h5::Error& e) {
    throw BadInput(quoted(path_) + ": array '" + name + "' of point '" + id + "' cannot be read: " + e.what());
  }
}

std::map<std::string, Array> ResultFile::arrays_with_prefix(const std::string& id, const std::string& prefix) const {
  std::map<std::string, Array> out;
  for (const std::string& name : arrays(id))
    if (name.compare(0, prefix.size(), prefix) == 0) out[name.substr(prefix.size())] = array(id, name);
  return out;
}

bool ResultFile::has_attribute(const std::string& name) const { return file_->root().has_attr(name); }

std::string ResultFile::attribute(const std::string& name) const {
  h5::SilenceErrors quiet;
  const h5::Group& root = file_->root();
  if (!root.has_attr(name)) throw BadInput(quoted(path_) + " has no root attribute '" + name + "'");
  try {
    return root.attr_string(name);
  } catch (const h5::Error&) {
  }
  try {
    return std::to_string(root.attr_int(name));
  } catch (const h5::Error&) {
  }
  return canonical(root.attr_double(name));
}

std::pair<std::string, std::string> split_point_reference(const std::string& reference) {
  const auto hash = reference.rfind('#');
  if (hash == std::string::npos) return {reference, ""};
  return {reference.substr(0, hash), reference.substr(hash + 1)};
}

ResultPoint open_point_reference(const std::string& reference, const std::vector<std::string>& experiments) {
  const auto [path, id] = split_point_reference(reference);
  ResultPoint p{ResultFile::open(path, experiments), id};
  if (!p.file.has(id)) throw BadInput("names no point of " + quoted(path));
  return p;
}

ParamSpec model_fingerprint_param(const std::string& reference, const std::vector<std::string>& experiments) {
  auto cache = std::make_shared<std::map<std::string, std::string>>();  // per reference: a grid repeats them
  return derived_text_param(
      kModelFingerprint, "SHA-256 of the weights (param.* arrays) of the model --" + reference + " names",
      "--" + reference + " (the model's weights)", [=](const Point& p) -> Value {
        const std::string& named = p.text(reference);
        if (named == "none") return named;
        auto found = cache->find(named);
        if (found == cache->end()) {
          const ResultPoint point = open_point_reference(named, experiments);
          found = cache->emplace(named, weights_fingerprint(point.file.arrays_with_prefix(point.id, "param."))).first;
        }
        return found->second;
      });
}

ParamSpec point_reference_param(std::string name, std::string default_value, std::string help,
                                std::vector<std::string> experiments) {
  ParamSpec p = text_param(std::move(name), std::move(default_value), std::move(help), {});
  p.allowed = "FILE.h5 (every point of it) or FILE.h5#ID, a result file of " + joined(experiments);
  p.expand = [experiments](const std::string& item) {
    if (item.find('#') != std::string::npos) return std::vector<std::string>{item};
    std::vector<std::string> out;
    try {
      const ResultFile file = ResultFile::open(item, experiments);
      for (const std::string& id : file.ids()) out.push_back(item + "#" + id);
    } catch (const BadInput& e) {
      throw BadInput(std::string("cannot be read: ") + e.what());
    }
    return out;
  };
  p.check = [experiments](const Value& v) -> std::optional<std::string> {
    const auto [path, id] = split_point_reference(std::get<std::string>(v));
    try {
      if (!ResultFile::open(path, experiments).has(id)) return "names no point of " + quoted(path);
    } catch (const BadInput& e) {
      return std::string("cannot be read: ") + e.what();
    }
    return std::nullopt;
  };
  return p;
}

}  // namespace sharp::runner

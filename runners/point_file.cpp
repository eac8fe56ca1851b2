#include "runners/point_file.hpp"

#include <filesystem>

#include "h5/h5.hpp"
#include "runners/provenance.hpp"
#include "runners/record_checksum.hpp"
#include "runners/result_checksum.hpp"

namespace sharp::runner {

std::string part_path(const std::string& parts_dir, const std::string& id) { return parts_dir + "/" + id + ".h5"; }
std::string checkpoint_path(const std::string& parts_dir, const std::string& id) {
  return parts_dir + "/" + id + ".ckpt.h5";
}

namespace {

void write_value(h5::Group& g, const std::string& name, const Value& v) {
  if (auto* i = std::get_if<std::int64_t>(&v))
    g.write_scalar(name, *i);
  else if (auto* d = std::get_if<double>(&v))
    g.write_scalar(name, *d);
  else
    g.write_string(name, std::get<std::string>(v));
}

void write_array(h5::Group& g, const std::string& name, const Array& a) {
  if (auto* d = std::get_if<std::vector<double>>(&a.data))
    g.write(name, d->data(), a.shape);
  else {
    const auto& i = std::get<std::vector<std::int64_t>>(a.data);
    g.write(name, i.data(), a.shape);
  }
}

}  // namespace

void write_record(h5::Group& group, const NamedValues& record) {
  h5::Group metrics = group.create_group("metrics");
  for (const auto& [name, v] : record.metrics) {
    if (auto* d = std::get_if<double>(&v))
      metrics.write_scalar(name, *d);
    else
      metrics.write_scalar(name, std::get<std::int64_t>(v));
  }
  h5::Group arrays = group.create_group("arrays");
  for (const auto& [name, a] : record.arrays) write_array(arrays, name, a);
}

Record read_record(const h5::Group& group) {
  Record r;
  read_record(group, r);
  return r;
}

void read_record(const h5::Group& group, NamedValues& r) {
  const h5::Group metrics = group.open_group("metrics");
  for (const std::string& name : metrics.children()) {
    if (metrics.dataset_kind(name) == h5::Group::Kind::Integer)
      r.metrics[name] = metrics.read_scalar<std::int64_t>(name);
    else
      r.metrics[name] = metrics.read_scalar<double>(name);
  }
  const h5::Group arrays = group.open_group("arrays");
  for (const std::string& name : arrays.children()) {
    Array a;
    if (arrays.dataset_kind(name) == h5::Group::Kind::Integer)
      a.data = arrays.read<std::int64_t>(name, &a.shape);
    else
      a.data = arrays.read<double>(name, &a.shape);
    r.arrays[name] = std::move(a);
  }
}

const std::string* model_fingerprint_of(const Point& point) {
  for (const auto& [name, v] : point.values)
    if (name == kModelFingerprint) return &std::get<std::string>(v);
  return nullptr;
}

std::string part_model_fingerprint(const std::string& path) {
  h5::SilenceErrors quiet;
  try {
    h5::File f = h5::File::open_read(path);
    return f.root().has_attr(kModelFingerprint) ? f.root().attr_string(kModelFingerprint) : "";
  } catch (const h5::Error&) {
    return "";
  }
}

void write_point_file(const std::string& path, const std::string& experiment, const std::string& fingerprint,
                      const Point& point, const Record& record, const PointTiming& timing) {
  // Not fsynced: a part file that an OS crash leaves damaged fails is_complete() or the merge's
  // reading and is computed again, while 1 ms of fsync per point would dominate grids of cheap points.
  h5::AtomicFile file(path, h5::Durability::ProcessCrash);
  h5::Group& root = file.root();
  root.set_attr("schema", kSchema);
  root.set_attr("experiment", experiment);
  root.set_attr("fingerprint", fingerprint);
  root.set_attr("point_id", point.id);
  if (const std::string* model = model_fingerprint_of(point)) root.set_attr(kModelFingerprint, *model);
  root.set_attr("created", timing.created);
  root.set_attr("finished", timing.finished);
  write_build_provenance(root);
  h5::Group params = root.create_group("params");
  for (const auto& [name, v] : point.values) write_value(params, name, v);
  write_record(root, record);
  root.set_attr("checksum", record_checksum(record));
  h5::Group t = root.create_group("timing");
  t.write_scalar("wall_seconds", timing.wall_seconds);
  t.write_scalar("peak_rss_bytes", timing.peak_rss_bytes);
  t.write_scalar("threads", timing.threads);
  root.set_attr("complete", std::int64_t{1});  // last: only a finished file claims completeness
  file.commit();
}

std::optional<std::string> complete_part_fingerprint(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  if (!h5::is_complete(path)) return std::nullopt;
  h5::SilenceErrors quiet;
  try {
    h5::File f = h5::File::open_read(path);
    return f.root().attr_string("fingerprint");
  } catch (const h5::Error&) {
    return std::nullopt;
  }
}

std::optional<std::string> part_damage(const std::string& path, const std::string& point_id) {
  h5::SilenceErrors quiet;
  try {
    h5::File f = h5::File::open_read(path);
    const h5::Group& root = f.root();
    if (root.attr_string("point_id") != point_id) return "it names point " + root.attr_string("point_id");
    if (!root.has_attr("checksum")) return std::string("it has no checksum (written by an older version)");
    const std::string stored = root.attr_string("checksum");
    const std::string actual = record_checksum(read_record(root));
    if (actual != stored) return "its data do not match its checksum (" + actual + ", stored " + stored + ")";
    return std::nullopt;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return "it cannot be read (" + what.substr(0, what.find('\n')) + ")";
  }
}

void write_checkpoint(const std::string& path, const std::string& point_id, const CheckpointState& state) {
  h5::AtomicFile file(path, h5::Durability::ProcessCrash);  // a damaged checkpoint is set aside (below)
  file.root().set_attr("point_id", point_id);
  file.root().set_attr("written", utc_now_iso());
  h5::Group g = file.root().create_group("state");
  write_record(g, state);
  file.root().set_attr("checksum", result_data_checksum(file.root()));
  file.root().set_attr("complete", std::int64_t{1});
  file.commit();
}

std::optional<CheckpointState> read_checkpoint(const std::string& path, const std::string& point_id) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  if (!h5::is_complete(path)) throw BadCheckpoint("it is not a complete HDF5 checkpoint");
  h5::SilenceErrors quiet;
  CheckpointState state;
  try {
    h5::File f = h5::File::open_read(path);
    const h5::Group& root = f.root();
    if (root.attr_string("point_id") != point_id)
      throw BadCheckpoint("it holds the state of point " + root.attr_string("point_id"));
    if (root.has_attr("checksum") && root.attr_string("checksum") != result_data_checksum(root))
      throw BadCheckpoint("its data do not match its checksum");
    read_record(root.open_group("state"), state);
  } catch (const h5::Error& e) {
    const std::string what = e.what();
    throw BadCheckpoint("it cannot be read (" + what.substr(0, what.find('\n')) + ")");
  }
  return state;
}

std::string set_checkpoint_aside(const std::string& path) {
  std::error_code ec;
  for (int k = 1;; ++k) {
    const std::string aside = path + ".bad-" + std::to_string(k);
    if (std::filesystem::exists(std::filesystem::symlink_status(aside, ec))) continue;
    std::filesystem::rename(path, aside, ec);
    if (ec)
      throw std::runtime_error("cannot rename the bad checkpoint '" + path + "' to '" + aside + "': " + ec.message());
    return aside;
  }
}

}  // namespace sharp::runner

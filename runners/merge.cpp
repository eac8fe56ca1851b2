#include "runners/merge.hpp"

#include <filesystem>
#include <map>

#include "core/errors.hpp"
#include "h5/h5.hpp"
#include "runners/labelled_view.hpp"
#include "runners/point_file.hpp"
#include "runners/provenance.hpp"
#include "runners/result_checksum.hpp"

namespace sharp::runner {
namespace {

// One /points/<metric> column, typed by the first point that reports it.
struct Column {
  bool integer = false;
  std::vector<double> reals;
  std::vector<std::int64_t> ints;
};

void write_param_column(h5::Group& params, const ParamSpec& spec, const Grid& grid) {
  const std::string& name = spec.name;
  switch (spec.type) {
    case ParamType::Integer: {
      std::vector<std::int64_t> v;
      for (const Point& p : grid.points()) v.push_back(p.integer(name));
      params.write(name, v);
      break;
    }
    case ParamType::Real: {
      std::vector<double> v;
      for (const Point& p : grid.points()) v.push_back(p.real(name));
      params.write(name, v);
      break;
    }
    case ParamType::Text: {
      std::vector<std::string> v;
      for (const Point& p : grid.points()) v.push_back(p.text(name));
      params.write_strings(name, v);
      break;
    }
  }
}

void copy_arrays(const h5::Group& from, h5::Group& to) {
  for (const std::string& name : from.children()) {
    std::vector<std::size_t> shape;
    if (from.dataset_kind(name) == h5::Group::Kind::Integer) {
      auto v = from.read<std::int64_t>(name, &shape);
      to.write(name, v.data(), shape);
    } else {
      auto v = from.read<double>(name, &shape);
      to.write(name, v.data(), shape);
    }
  }
}

}  // namespace

void merge_points(const Experiment& experiment, const Grid& grid, const RunOptions& options,
                  const std::string& parts_dir, int mpi_size, const std::string& parts_fingerprint) {
  const std::size_t P = grid.size();
  const std::string& expected = parts_fingerprint.empty() ? grid.fingerprint() : parts_fingerprint;
  std::map<std::string, Column> columns;
  std::vector<double> wall(P);
  std::vector<std::int64_t> rss(P), threads(P);
  std::string created;

  std::filesystem::path out_dir = std::filesystem::absolute(options.out).parent_path();
  std::filesystem::create_directories(out_dir);
  h5::AtomicFile out(options.out);
  h5::Group& root = out.root();
  h5::Group arrays_root = root.create_group("arrays");

  for (std::size_t i = 0; i < P; ++i) {
    const Point& point = grid.points()[i];
    h5::File part = h5::File::open_read(part_path(parts_dir, point.id));
    const h5::Group& proot = part.root();
    if (proot.attr_string("point_id") != point.id || proot.attr_string("fingerprint") != expected)
      throw std::runtime_error("part file of point " + point.id + " belongs to another configuration");
    const std::string c = proot.attr_string("created");
    if (created.empty() || c < created) created = c;

    const Record record = read_record(proot);
    for (const auto& [name, v] : record.metrics) {
      auto [it, fresh] = columns.try_emplace(name);
      Column& col = it->second;
      if (fresh) {
        col.integer = std::holds_alternative<std::int64_t>(v);
        if (col.integer)
          col.ints.assign(P, 0);
        else
          col.reals.assign(P, 0.0);
        if (i != 0) throw std::runtime_error("metric '" + name + "' is missing from point " + grid.points()[0].id);
      }
      if (col.integer != std::holds_alternative<std::int64_t>(v))
        throw std::runtime_error("metric '" + name + "' changes type at point " + point.id);
      if (col.integer)
        col.ints[i] = std::get<std::int64_t>(v);
      else
        col.reals[i] = std::get<double>(v);
    }
    if (record.metrics.size() != columns.size())
      throw std::runtime_error("point " + point.id + " reports other metrics than point " + grid.points()[0].id);
    if (!record.arrays.empty()) {
      h5::Group dst = arrays_root.create_group(point.id);
      copy_arrays(proot.open_group("arrays"), dst);
    }
    const h5::Group t = proot.open_group("timing");
    wall[i] = t.read_scalar<double>("wall_seconds");
    rss[i] = t.read_scalar<std::int64_t>("peak_rss_bytes");
    threads[i] = t.read_scalar<std::int64_t>("threads");
  }

  root.set_attr("schema", kSchema);
  root.set_attr("experiment", experiment.name());
  root.set_attr("fingerprint", grid.fingerprint());
  root.set_attr("command_line", options.command_line);
  root.set_attr("created", created);
  root.set_attr("finished", utc_now_iso());
  root.set_attr("mpi_size", std::int64_t{mpi_size});
  root.set_attr("threads", std::int64_t{options.threads});
  root.set_attr("points", static_cast<std::int64_t>(P));
  root.set_attr("notes", experiment.notes());
  root.set_attr("scale", options.scale);
  write_build_provenance(root);
  root.write_string("config", grid.config_text());

  h5::Group points = root.create_group("points");
  std::vector<std::string> ids;
  for (const Point& p : grid.points()) ids.push_back(p.id);
  points.write_strings("id", ids);
  h5::Group params = points.create_group("params");
  for (const Axis& axis : grid.axes()) write_param_column(params, axis.spec, grid);
  for (const ParamSpec& spec : grid.derived()) write_param_column(params, spec, grid);
  for (const auto& [name, col] : columns) {
    if (col.integer)
      points.write(name, col.ints);
    else
      points.write(name, col.reals);
  }
  h5::Group timing = root.create_group("timing");
  timing.write("wall_seconds", wall);
  timing.write("peak_rss_bytes", rss);
  timing.write("threads", threads);
  write_labelled_view(root, experiment.outputs());
  root.set_attr("checksum", result_data_checksum(root));  // over what was just written, read back
  root.set_attr("complete", std::int64_t{1});
  out.commit();
}

bool result_data_damaged(const std::string& path) {
  h5::SilenceErrors quiet;
  const h5::File f = h5::File::open_read(path);
  try {
    verify_result_checksum(f.root(), path);
    return false;
  } catch (const BadInput&) {
    return true;
  }
}

std::optional<std::string> complete_result_fingerprint(const std::string& path, const std::string& experiment) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || !h5::is_complete(path)) return std::nullopt;
  h5::SilenceErrors quiet;
  h5::File f = h5::File::open_read(path);
  const h5::Group& root = f.root();
  const std::string schema = root.has_attr("schema") ? root.attr_string("schema") : "?";
  const std::string exp = root.has_attr("experiment") ? root.attr_string("experiment") : "?";
  if (schema == "?" || exp == "?") return std::nullopt;  // not a sharp result: the caller refuses it
  if (schema != kSchema || exp != experiment)
    throw BadInput("--out: '" + path + "' is a result of experiment '" + exp + "' (schema " + schema + "), not of '" +
                   experiment + "'; choose another --out");
  return root.attr_string("fingerprint");
}

}  // namespace sharp::runner

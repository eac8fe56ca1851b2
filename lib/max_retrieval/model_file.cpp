#include "max_retrieval/model_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/errors.hpp"
#include "h5/h5.hpp"

namespace sharp::max_retrieval {
namespace {

h5::File open_training_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw BadInput("'" + path + "' does not exist (allowed: a merged sharp-train-max result file)");
  if (!h5::is_complete(path))
    throw BadInput("'" + path + "' is not a complete result file (rerun sharp-train-max to finish it)");
  h5::File f = h5::File::open_read(path);
  const h5::Group& root = f.root();
  if (!root.has_attr("schema") || root.attr_string("schema") != "sharp/1")
    throw BadInput("'" + path + "' is not of schema sharp/1");
  if (!root.has_attr("experiment") || root.attr_string("experiment") != "train-max")
    throw BadInput("'" + path + "' holds experiment '" +
                   (root.has_attr("experiment") ? root.attr_string("experiment") : std::string("?")) +
                   "', not train-max");
  return f;
}

}  // namespace

std::vector<std::string> trained_model_ids(const std::string& path) {
  h5::File f = open_training_file(path);
  return f.root().read_strings("points/id");
}

TrainedModel load_trained_model(const std::string& path, const std::string& id) {
  h5::File f = open_training_file(path);
  const h5::Group& root = f.root();
  const std::vector<std::string> ids = root.read_strings("points/id");
  const auto it = std::find(ids.begin(), ids.end(), id);
  if (it == ids.end()) throw BadInput("'" + path + "' has no model with id '" + id + "'");
  const std::size_t row = std::size_t(it - ids.begin());

  TrainedModel m;
  m.file = path;
  m.id = id;
  const auto width = root.read<std::int64_t>("points/params/width");
  const auto depth = root.read<std::int64_t>("points/params/depth");
  m.layout = make_model_layout({std::size_t(width.at(row)), std::size_t(depth.at(row))});
  m.train_n = root.read<std::int64_t>("points/params/train_n").at(row);
  m.seed = root.read<std::int64_t>("points/params/seed").at(row);
  m.train_normaliser = root.read_strings("points/params/normaliser").at(row);

  m.params.resize(m.layout.params.size());
  const h5::Group arrays = root.open_group("arrays/" + id);
  for (const nn::TensorInfo& t : m.layout.params.tensors()) {
    const std::string name = "param." + t.name;
    if (!arrays.exists(name)) throw BadInput("model '" + id + "' in '" + path + "' lacks " + name);
    std::vector<std::size_t> shape;
    const std::vector<double> values = arrays.read<double>(name, &shape);
    if (shape != t.shape || values.size() != t.size())
      throw BadInput(name + " of model '" + id + "' has the wrong shape");
    for (std::size_t j = 0; j < values.size(); ++j) {
      const float v = float(values[j]);
      if (double(v) != values[j] || !std::isfinite(v))
        throw NumericError(name + " of model '" + id + "' holds a value that is not a finite float32");
      m.params[t.offset + j] = v;
    }
  }
  return m;
}

std::pair<std::string, std::string> split_model_reference(const std::string& reference) {
  const auto hash = reference.rfind('#');
  if (hash == std::string::npos) return {reference, ""};
  return {reference.substr(0, hash), reference.substr(hash + 1)};
}

std::vector<std::string> model_references(const std::string& item) {
  if (item.find('#') != std::string::npos) return {item};
  std::vector<std::string> out;
  try {
    h5::SilenceErrors quiet;
    for (const std::string& id : trained_model_ids(item)) out.push_back(item + "#" + id);
  } catch (const BadInput& e) {
    throw BadInput(std::string("cannot be read: ") + e.what());
  } catch (const h5::Error&) {
    throw BadInput("cannot be read as HDF5");
  }
  return out;
}

TrainedModel load_referenced_model(const std::string& reference) {
  const auto [file, id] = split_model_reference(reference);
  return load_trained_model(file, id);
}

std::optional<std::string> model_reference_error(const std::string& reference) {
  const auto [file, id] = split_model_reference(reference);
  try {
    h5::SilenceErrors quiet;
    const auto ids = trained_model_ids(file);
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) return "names no model of '" + file + "'";
  } catch (const BadInput& e) {
    return std::string("cannot be read: ") + e.what();
  } catch (const h5::Error&) {
    return "cannot be read as HDF5";
  }
  return std::nullopt;
}

}  // namespace sharp::max_retrieval

#include "head_measure/model_reference.hpp"

#include <algorithm>
#include <filesystem>

#include "h5/h5.hpp"

namespace sharp::head_measure {

const std::vector<std::string>& transformer_trainers() {
  static const std::vector<std::string> names = {"train-text"};
  return names;
}

std::optional<std::string> transformer_reference_error(const std::string& reference) {
  const std::string path = reference.substr(0, reference.find('#'));
  std::string accepted;
  for (const std::string& n : transformer_trainers()) accepted += (accepted.empty() ? "sharp-" : ", sharp-") + n;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return "'" + path + "' does not exist (allowed: a result file of " + accepted + ")";
  std::string experiment = "?";
  try {
    h5::SilenceErrors quiet;
    if (!h5::is_complete(path)) return "'" + path + "' is not a complete result file";
    h5::File f = h5::File::open_read(path);
    if (f.root().has_attr("experiment")) experiment = f.root().attr_string("experiment");
  } catch (const std::exception& e) {
    return "'" + path + "' cannot be read as a result file: " + e.what();
  }
  const auto& names = transformer_trainers();
  if (std::find(names.begin(), names.end(), experiment) == names.end())
    return "'" + path + "' holds experiment '" + experiment + "', which has no transformer models (allowed: " +
           accepted + ")";
  return "'" + path + "' is a " + experiment + " file, but reading trained transformer models is not built yet";
}

}  // namespace sharp::head_measure

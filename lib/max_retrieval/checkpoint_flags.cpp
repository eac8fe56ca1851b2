#include "max_retrieval/checkpoint_flags.hpp"

#include <algorithm>
#include <fstream>

#include "core/errors.hpp"
#include "h5/h5.hpp"
#include "max_retrieval/model_file.hpp"

namespace sharp::max_retrieval {
namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text) {
    if (c == ',') {
      out.push_back(trim(item));
      item.clear();
    } else {
      item += c;
    }
  }
  out.push_back(trim(item));
  return out;
}

std::string join_list(const std::string& text) {
  std::string out = text;
  std::replace(out.begin(), out.end(), ',', kInPointListSeparator);
  return out;
}

}  // namespace

std::pair<std::string, std::string> split_checkpoint(const std::string& value) {
  const auto hash = value.rfind('#');
  if (hash == std::string::npos) return {value, ""};
  return {value.substr(0, hash), value.substr(hash + 1)};
}

std::optional<std::string> checkpoint_value_error(const std::string& value) {
  const auto [file, id] = split_checkpoint(value);
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

CheckpointCommandLine::CheckpointCommandLine(int argc, char** argv, std::vector<std::string> list_flags)
    : args_(argv, argv + argc), list_flags_(std::move(list_flags)) {}

std::string CheckpointCommandLine::expand_checkpoints(const std::string& text) {
  std::string out;
  for (const std::string& item : split_commas(text)) {
    std::vector<std::string> values{item};
    if (item.find('#') == std::string::npos) {
      try {
        h5::SilenceErrors quiet;
        values.clear();
        for (const std::string& id : trained_model_ids(item)) values.push_back(item + "#" + id);
      } catch (const std::exception&) {
        values = {item + "#"};
      }
    }
    for (const std::string& v : values) out += (out.empty() ? "" : ",") + v;
  }
  return out;
}

void CheckpointCommandLine::resolve() {
  // The value of flag `name` rewritten, on the command line (--name V or --name=V).
  auto rewrite = [&](const std::string& name, auto transform) {
    const std::string flag = "--" + name, eq = flag + "=";
    bool seen = false;
    for (std::size_t i = 1; i < args_.size(); ++i) {
      if (args_[i].rfind(eq, 0) == 0) {
        args_[i] = eq + transform(args_[i].substr(eq.size()));
        seen = true;
      } else if (args_[i] == flag && i + 1 < args_.size()) {
        args_[i + 1] = transform(args_[i + 1]);
        seen = true;
      }
    }
    return seen;
  };
  const bool help = std::find(args_.begin(), args_.end(), "--help") != args_.end() ||
                    std::find(args_.begin(), args_.end(), "-h") != args_.end();
  std::vector<std::string> seen;
  if (rewrite("checkpoint", expand_checkpoints)) seen.push_back("checkpoint");
  for (const std::string& name : list_flags_)
    if (rewrite(name, join_list)) seen.push_back(name);

  std::string config;
  for (std::size_t i = 1; i + 1 < args_.size(); ++i)
    if (args_[i] == "--config") config = args_[i + 1];
  if (!config.empty()) {
    std::ifstream in(config);
    std::string line;
    while (in && std::getline(in, line)) {
      const auto hash = line.find('#');
      if (hash != std::string::npos) line = line.substr(0, hash);
      const auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      std::string key = trim(line.substr(0, eq));
      std::replace(key.begin(), key.end(), '_', '-');
      const std::string value = trim(line.substr(eq + 1));
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      if (key == "checkpoint") {
        args_.insert(args_.end(), {"--checkpoint", expand_checkpoints(value)});
        seen.push_back(key);
      } else if (std::find(list_flags_.begin(), list_flags_.end(), key) != list_flags_.end()) {
        args_.insert(args_.end(), {"--" + key, join_list(value)});
        seen.push_back(key);
      }
    }
  }
  if (!help && std::find(seen.begin(), seen.end(), "checkpoint") == seen.end())
    args_.insert(args_.end(), {"--checkpoint", expand_checkpoints("results/train-max.h5")});
}

std::vector<char*> CheckpointCommandLine::argv() {
  std::vector<char*> v;
  for (std::string& a : args_) v.push_back(a.data());
  v.push_back(nullptr);
  return v;
}

}  // namespace sharp::max_retrieval

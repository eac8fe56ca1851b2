#include "runners/result_checksum.hpp"

#include <algorithm>
#include <bit>
#include <vector>

#include "core/errors.hpp"
#include "core/sha256.hpp"
#include "h5/h5.hpp"

namespace sharp::runner {
namespace {

// Paths (relative to root, '/'-separated) of the datasets the checksum covers.
void collect(const h5::Group& group, const std::string& prefix, std::vector<std::string>& out) {
  for (const std::string& name : group.children()) {
    const std::string path = prefix + name;
    if (path == "timing") continue;
    if (!group.is_dataset(name))
      collect(group.open_group(name), path + "/", out);
    else if (!group.is_virtual(name))
      out.push_back(path);
  }
}

// What precedes a dataset's values: path, NUL, element code, NUL, rank, dimensions.
void add_header(Sha256& sha, const std::string& path, const std::string& code, const std::vector<std::size_t>& shape) {
  sha.text(path);
  sha.bytes("", 1);
  sha.text(code);
  sha.bytes("", 1);
  sha.u64(shape.size());
  for (std::size_t d : shape) sha.u64(d);
}

void add_dataset(Sha256& sha, const h5::Group& root, const std::string& path) {
  const std::vector<std::size_t> shape = root.shape(path);
  const bool text = root.dataset_kind(path) == h5::Group::Kind::String;
  std::string code = "str";
  std::vector<unsigned char> raw;
  if (!text) raw = root.read_raw(path, &code);
  add_header(sha, path, code, shape);
  if (!text) {
    sha.bytes(raw.data(), raw.size());
    return;
  }
  for (const std::string& s : root.read_strings(path)) {
    sha.u64(s.size());
    sha.text(s);
  }
}

}  // namespace

std::string result_data_checksum(const h5::Group& root) {
  std::vector<std::string> paths;
  collect(root, "", paths);
  std::sort(paths.begin(), paths.end());
  Sha256 sha;
  for (const std::string& path : paths) add_dataset(sha, root, path);
  return sha.hex();
}

std::string weights_fingerprint(const std::map<std::string, Array>& weights) {
  static_assert(std::endian::native == std::endian::little, "the fingerprint hashes values as little-endian bytes");
  Sha256 sha;
  for (const auto& [name, a] : weights) {
    if (const auto* d = std::get_if<std::vector<double>>(&a.data)) {
      add_header(sha, name, "f8", a.shape);
      sha.bytes(d->data(), d->size() * sizeof(double));
    } else {
      const auto& i = std::get<std::vector<std::int64_t>>(a.data);
      add_header(sha, name, "i8", a.shape);
      sha.bytes(i.data(), i.size() * sizeof(std::int64_t));
    }
  }
  return sha.hex();
}

std::optional<std::string> verify_result_checksum(const h5::Group& root, const std::string& path) {
  if (!root.has_attr("checksum")) return std::string(kNoChecksum);
  if (root.attr_string("checksum") != result_data_checksum(root))
    throw BadInput("'" + path + "': " + kChecksumMismatch + "; rerun to regenerate");
  return std::nullopt;
}

}  // namespace sharp::runner

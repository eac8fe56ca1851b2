#include "runners/record_checksum.hpp"

#include <cstring>

#include "core/hash.hpp"

namespace sharp::runner {
namespace {

// FNV-1a over a stream of byte runs (hash64 takes one run).
class Fnv {
 public:
  void bytes(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001b3ULL;
    }
  }
  void text(const std::string& s) { bytes(s.c_str(), s.size() + 1); }  // with its NUL: "ab","c" != "a","bc"
  template <class T>
  void value(T v) {
    bytes(&v, sizeof v);
  }
  std::uint64_t digest() const { return mix64(h_); }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace

std::string record_checksum(const NamedValues& record) {
  Fnv f;
  f.value(std::uint64_t(record.metrics.size()));
  for (const auto& [name, v] : record.metrics) {
    f.text(name);
    if (const auto* d = std::get_if<double>(&v)) {
      f.value('r');
      f.value(*d);
    } else {
      f.value('i');
      f.value(std::get<std::int64_t>(v));
    }
  }
  f.value(std::uint64_t(record.arrays.size()));
  for (const auto& [name, a] : record.arrays) {
    f.text(name);
    f.value(std::uint64_t(a.shape.size()));
    for (std::size_t s : a.shape) f.value(std::uint64_t(s));
    if (const auto* d = std::get_if<std::vector<double>>(&a.data)) {
      f.value('r');
      f.bytes(d->data(), d->size() * sizeof(double));
    } else {
      const auto& i = std::get<std::vector<std::int64_t>>(a.data);
      f.value('i');
      f.bytes(i.data(), i.size() * sizeof(std::int64_t));
    }
  }
  return hex64(f.digest());
}

}  // namespace sharp::runner

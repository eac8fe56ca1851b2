#pragma once
// SHA-256 (FIPS 180-4), streamed: the checksum of merged result files and the fingerprint of a
// trained model's weights (docs/architecture.md#hdf5-schema). Python's hashlib.sha256 gives the same
// digest over the same bytes, so the analysis verifies what the runner wrote.
#include <array>
#include <cstdint>
#include <string>

namespace sharp {

class Sha256 {
 public:
  Sha256();
  void bytes(const void* data, std::size_t size);
  void text(const std::string& s) { bytes(s.data(), s.size()); }
  void u64(std::uint64_t v);  // 8 bytes, little-endian
  std::string hex();  // 64 lower-case hex digits; the object is spent afterwards

 private:
  void block(const unsigned char* p);
  std::array<std::uint32_t, 8> h_;
  std::array<unsigned char, 64> buffer_{};
  std::size_t used_ = 0;
  std::uint64_t length_ = 0;  // bytes
};

}  // namespace sharp

#pragma once
// The checksum of a merged result file (docs/architecture.md#hdf5-schema), its root attribute
// `checksum`: SHA-256, in hex, over the values of every dataset that stores values of its own, in
// byte order of their paths, except /timing (a run's cost, which differs between identical runs)
// and the labelled view's virtual datasets (they read /points and /arrays, which are covered).
// Each dataset contributes: its path without the leading '/', NUL, its element code ("f8", "i8",
// "u1", ... as numpy writes them, or "str"), NUL, its rank and dimensions (8-byte little-endian
// each), then its values: numbers as the stored little-endian bytes, strings as an 8-byte length
// and the UTF-8 bytes each. Attributes (provenance, `complete`, the checksum itself) are not
// covered. analysis/common.py (data_checksum) and python/sharp compute the same digest, so it is
// the same for a local, MPI or Slurm run of one configuration.
#include <map>
#include <optional>
#include <string>

#include "runners/record.hpp"

namespace sharp::h5 {
class Group;
}

namespace sharp::runner {

std::string result_data_checksum(const h5::Group& root);

// SHA-256 (hex) of a model's weight arrays, by name, encoded as the datasets of the checksum above
// (name, element code, shape, little-endian bytes): the `model_fingerprint` of the points that
// scored it. It depends on the values only, not on the file that holds them.
std::string weights_fingerprint(const std::map<std::string, Array>& weights);

// What a reader says of a file whose data do not match its checksum (then what to do).
inline constexpr const char* kChecksumMismatch =
    "checksum mismatch: the file was modified or damaged after it was written";
// What a reader notes of a file written before merged files carried a checksum.
inline constexpr const char* kNoChecksum =
    "no checksum (written before result files carried one): its data cannot be verified";

// Checks the root attribute `checksum` of an open result file: nullopt when it matches; the note
// kNoChecksum when the file has none; throws sharp::BadInput("'PATH': " + kChecksumMismatch + "; rerun to regenerate") when
// the data differ from it.
std::optional<std::string> verify_result_checksum(const h5::Group& root, const std::string& path);

}  // namespace sharp::runner

#pragma once
// Where and how a file was made: root attributes of point and result files (docs/architecture.md#hdf5-schema).
// None of this is "data": it is never compared between runs.
#include <cstdint>
#include <string>

namespace sharp::h5 {
class Group;
}

namespace sharp::runner {

std::string utc_now_iso();  // "2026-12-02T10:28:22Z"
std::string host_name();
std::int64_t peak_rss_bytes();  // of this process so far (getrusage)
std::string library_versions();  // "hdf5 1.10.8; xtensor 0.24.3; ..."

// git_sha, git_dirty, compiler, build_type, isa, versions, host.
void write_build_provenance(h5::Group& root);

}  // namespace sharp::runner

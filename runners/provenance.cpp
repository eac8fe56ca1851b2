#include "runners/provenance.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

#include "core/simd_isa.hpp"
#include "h5/h5.hpp"
#include "sharp_build_info.hpp"

namespace sharp::runner {

std::string utc_now_iso() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<std::int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

std::string library_versions() {
  return std::string("sharp ") + build_info::version + "; hdf5 " + build_info::hdf5_version + "; xtensor " +
         build_info::xtensor_version + "; xsimd " + build_info::xsimd_version + "; boost " + build_info::boost_version;
}

void write_build_provenance(h5::Group& root) {
  root.set_attr("git_sha", build_info::git_sha);
  root.set_attr("git_dirty", std::int64_t{build_info::git_dirty});
  root.set_attr("compiler", build_info::compiler);
  root.set_attr("build_type", build_info::build_type);
  root.set_attr("isa", build_info::isa);
  // The ISA the dispatched kernels ran (avx2 or avx512; SHARP_SIMD forces one): the same bits
  // either way (docs/architecture.md#determinism), recorded for the record.
  root.set_attr("simd", simd_isa_name(active_simd_isa()));
  root.set_attr("versions", library_versions());
  root.set_attr("host", host_name());
}

}  // namespace sharp::runner

#pragma once
// Merge: every complete point file of the grid -> one result file PATH.h5 in schema "sharp/1"
// (docs/architecture.md#hdf5-schema), written to a temporary name and renamed.
#include <string>

#include "runners/experiment.hpp"
#include "runners/options.hpp"

namespace sharp::runner {

// All points must have complete part files with the grid's fingerprint (the caller checks).
void merge_points(const Experiment& experiment, const Grid& grid, const RunOptions& options,
                  const std::string& parts_dir, int mpi_size);

// The fingerprint of a complete result file of this experiment; nullopt when the file is missing,
// incomplete or not a sharp result at all (the runner refuses to replace such a file without
// --overwrite). Throws BadInput when the file is a sharp result of another schema or experiment.
// True when the complete result file at `path` has a checksum its data no longer match (a file
// without a checksum is not damaged: it predates them).
bool result_data_damaged(const std::string& path);

std::optional<std::string> complete_result_fingerprint(const std::string& path, const std::string& experiment);

}  // namespace sharp::runner

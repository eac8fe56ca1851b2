#pragma once
// Resume (docs/architecture.md#points-parts-merge-resume): what earlier runs left in PATH.h5.parts
// and beside PATH.h5 — complete part files (those points do not run again), damaged ones (set aside,
// they run again), parts of another configuration, temporaries of killed runs, a half-removed parts
// directory — read before a run decides what to do.
#include <string>
#include <vector>

#include "runners/grid.hpp"
#include "runners/options.hpp"

namespace sharp::runner {

struct PartsSurvey {
  std::vector<bool> complete;  // per grid point
  std::size_t n_complete = 0;
};

// Which points have complete, sound part files (only those of `mine` are read through and checked
// against their checksum; a damaged one is renamed <id>.h5.bad, reported, and runs again). Parts of
// another configuration are refused (BadInput), or with `clear_foreign` (--overwrite) removed when
// no shard is running.
PartsSurvey survey_parts(const Grid& grid, const std::string& parts_dir, const std::vector<bool>& mine,
                         const RunOptions& options, bool clear_foreign);

// True when a point of the merged file `out` (of this grid) was scored on another model than the one
// it names now; says so for each such point.
bool models_changed(const Grid& grid, const std::string& out);

// Removes temporaries (<name>.tmp.*) left by killed runs for the given points' part files.
void clean_stale_temporaries(const std::string& parts_dir, const std::vector<const Point*>& points);

// Removes temporaries of the result file `out` left by killed merges.
void clean_output_temporaries(const std::string& out);

// Removes a parts directory resumably: renamed to PATH.h5.parts.deleting first, so that a kill
// halfway leaves a name that no run reads as parts, and the next run finishes the deletion.
void remove_parts_dir(const std::string& parts_dir);

}  // namespace sharp::runner

#pragma once
// One finished point on disk: PATH.h5.parts/<id>.h5, written to a temporary name and renamed, with
// root attribute complete=1. Layout: /params/<name> (scalars), /metrics/<name> (scalars),
// /arrays/<name>, /timing/{wall_seconds,peak_rss_bytes,threads}. Checkpoints (<id>.ckpt.h5) hold a
// CheckpointState under /state.
#include <optional>
#include <string>

#include "runners/checkpoint_state.hpp"
#include "runners/grid.hpp"
#include "runners/record.hpp"

namespace sharp::h5 {
class Group;
}

namespace sharp::runner {

std::string part_path(const std::string& parts_dir, const std::string& id);
std::string checkpoint_path(const std::string& parts_dir, const std::string& id);

struct PointTiming {
  double wall_seconds = 0;
  std::int64_t peak_rss_bytes = 0;
  std::int64_t threads = 1;
  std::string created, finished;
};

void write_point_file(const std::string& path, const std::string& experiment, const std::string& fingerprint,
                      const Point& point, const Record& record, const PointTiming& timing);

// The fingerprint of a complete part file; nullopt when the file is missing or incomplete.
std::optional<std::string> complete_part_fingerprint(const std::string& path);

// Why the complete part file at `path` cannot be merged (unreadable, another point, no checksum, data
// that do not match the checksum), or nullopt when it is sound. Reads all of its data.
std::optional<std::string> part_damage(const std::string& path, const std::string& point_id);

// The model a point scores (its derived kModelFingerprint), or nullptr when it scores none.
const std::string* model_fingerprint_of(const Point& point);
// The kModelFingerprint attribute of a complete part file; "" when it has none (written before).
std::string part_model_fingerprint(const std::string& path);

void write_record(h5::Group& group, const NamedValues& values);  // metrics/ and arrays/ under group
void read_record(const h5::Group& group, NamedValues& into);
Record read_record(const h5::Group& group);

// A checkpoint carries the checksum of merged files over its datasets (runners/result_checksum.hpp).
void write_checkpoint(const std::string& path, const std::string& point_id, const CheckpointState& state);
// The state of the checkpoint at `path`; nullopt when there is none (or an incomplete one). Throws
// BadCheckpoint with the reason when it cannot be used: unreadable, of another point, data that do not
// match its checksum. (What its values must satisfy is the point's to check: it throws BadCheckpoint
// in turn.) (One without a checksum, written before
// checkpoints carried one, is read.)
std::optional<CheckpointState> read_checkpoint(const std::string& path, const std::string& point_id);
// Renames a bad checkpoint to <path>.bad-<k>, k the first unused integer from 1; returns the new name.
std::string set_checkpoint_aside(const std::string& path);

}  // namespace sharp::runner

#pragma once
// A checksum of a point's data (docs/architecture.md#points-parts-merge-resume): every metric and
// array of its Record, names, types, shapes and bytes, in name order. Written into each part file
// (root attribute "checksum") and verified before a part counts as complete, so a flipped byte on
// disk makes the point run again instead of reaching the merged file.
#include <string>

#include "runners/record.hpp"

namespace sharp::runner {

std::string record_checksum(const NamedValues& record);  // 16 hex digits

}  // namespace sharp::runner

#pragma once
// --only NAME=VALUES (docs/architecture.md#points-parts-merge-resume): a run of some points of a grid,
// e.g. a pilot (seed 1 of every arm) before the whole study. The selected points run into the
// output's parts directory under the whole grid's fingerprint and are never merged into --out, so a
// later run without --only resumes them; --only-out merges them, once complete, into a result file
// of their own (the sub-grid, with its own fingerprint) that other experiments can read.
#include <optional>
#include <string>
#include <vector>

#include "runners/grid.hpp"

namespace sharp::runner {

struct PointFilter {
  std::string name;  // a parameter of the grid
  std::vector<Value> values;  // the values kept, each one of the grid's

  bool selects(const Point& point) const;
  std::string describe() const;  // "seed=1", "normaliser=softmax,adaptive"
};

// Parses "NAME=VALUES" against the grid's axes ("d-model" and "d_model" alike; VALUES as the flag
// takes them). Throws BadInput naming --only when NAME is no parameter or a value is not the grid's.
PointFilter parse_point_filter(const std::string& text, const Grid& grid);

// The grid restricted to the filter's values: the same point ids, its own fingerprint.
Grid sub_grid(const Grid& grid, const PointFilter& filter);

}  // namespace sharp::runner

#include "runners/point_filter.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace sharp::runner {

bool PointFilter::selects(const Point& point) const {
  return std::find(values.begin(), values.end(), point.value(name)) != values.end();
}

std::string PointFilter::describe() const {
  std::string text = name + "=";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + canonical(values[i]);
  return text;
}

namespace {

// Whether axis `a` is the grid parameter called `parameter` (a parameter's name such as "seed", never
// a normaliser's: those are asked of the registry).
bool is_parameter(const Axis& a, const std::string& parameter) {
  const std::string& own = a.spec.name;
  return own == parameter;
}

}  // namespace

PointFilter parse_point_filter(const std::string& text, const Grid& grid) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw BadInput("--only: '" + text +
                   "' is not NAME=VALUES (e.g. --only seed=1 or --only normaliser=softmax,adaptive)");
  std::string name = text.substr(0, eq);
  std::replace(name.begin(), name.end(), '-', '_');
  const auto axis =
      std::find_if(grid.axes().begin(), grid.axes().end(), [&](const Axis& a) { return is_parameter(a, name); });
  if (axis == grid.axes().end()) throw BadInput("--only: '" + name + "' is not a parameter of the grid (see --help)");
  PointFilter filter{name, parse_values(axis->spec, text.substr(eq + 1))};
  for (const Value& v : filter.values)
    if (std::find(axis->values.begin(), axis->values.end(), v) == axis->values.end()) {
      std::string taken;
      for (const Value& w : axis->values) taken += (taken.empty() ? "" : ", ") + canonical(w);
      throw BadInput("--only: " + name + "=" + canonical(v) + " is not a point of the grid (" + name + " takes " +
                     taken + ")");
    }
  return filter;
}

Grid sub_grid(const Grid& grid, const PointFilter& filter) {
  std::vector<Axis> axes = grid.axes();
  for (Axis& a : axes) {
    if (!is_parameter(a, filter.name)) continue;
    std::vector<Value> kept;  // in the grid's order, whatever the order of --only
    for (const Value& v : a.values)
      if (std::find(filter.values.begin(), filter.values.end(), v) != filter.values.end()) kept.push_back(v);
    a.values = std::move(kept);
  }
  return Grid(grid.experiment(), std::move(axes), grid.derived());
}

}  // namespace sharp::runner

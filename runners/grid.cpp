#include "runners/grid.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "core/errors.hpp"
#include "core/hash.hpp"

namespace sharp::runner {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(trim(cur));
  return parts;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  q += s;
  q += '\'';
  return q;
}

[[noreturn]] void bad(const ParamSpec& spec, const std::string& what) {
  // A reason that already says what is allowed (from a parser of the value's own syntax) is enough.
  if (what.find("(allowed:") != std::string::npos) throw BadInput(spec.flag() + ": " + what);
  const bool axis = spec.list == ListRole::GridAxis;
  throw BadInput(spec.flag() + ": " + what + " (allowed: " + spec.allowed +
                 (axis && spec.type != ParamType::Text ? "; a list a,b,c or a range 2^a..2^b" : "") +
                 (axis && spec.type == ParamType::Text ? "; a comma-separated list" : "") +
                 (spec.list == ListRole::InsidePoint ? "; a list a,b or a+b, evaluated inside each point" : "") + ")");
}

bool parse_int(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  if (*b == '+') ++b;
  auto res = std::from_chars(b, s.data() + s.size(), out);
  return res.ec == std::errc() && res.ptr == s.data() + s.size();
}

bool parse_real(const std::string& s, double& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  if (*b == '+') ++b;
  auto res = std::from_chars(b, s.data() + s.size(), out);
  return res.ec == std::errc() && res.ptr == s.data() + s.size() && std::isfinite(out);
}

// "2^k" -> k. Returns false if the item has another form.
bool parse_power(const std::string& s, std::int64_t& exponent) {
  if (s.size() < 3 || s[0] != '2' || s[1] != '^') return false;
  return parse_int(s.substr(2), exponent);
}

Value power_of_two(const ParamSpec& spec, std::int64_t k, const std::string& item) {
  if (spec.type == ParamType::Integer) {
    if (k < 0 || k > 62) bad(spec, "'" + item + "' is not an integer power of two below 2^63");
    return std::int64_t{1} << k;
  }
  if (k < -1000 || k > 1000) bad(spec, "'" + item + "' is out of range");
  return std::ldexp(1.0, static_cast<int>(k));
}

Value parse_scalar(const ParamSpec& spec, const std::string& item) {
  std::int64_t k;
  if (spec.type != ParamType::Text && parse_power(item, k)) return power_of_two(spec, k, item);
  switch (spec.type) {
    case ParamType::Integer: {
      std::int64_t v;
      if (!parse_int(item, v)) bad(spec, "'" + item + "' is not an integer");
      return v;
    }
    case ParamType::Real: {
      double v;
      if (!parse_real(item, v)) bad(spec, "'" + item + "' is not a finite number");
      if (v == 0.0) v = 0.0;  // -0 is 0: one value, one point id
      // A subnormal passes every "> 0" check and then overflows the first division (spread/theta).
      if (v != 0.0 && !std::isnormal(v))
        bad(spec, "'" + item + "' is subnormal (nonzero magnitudes below 2.2250738585072014e-308 are refused)");
      return v;
    }
    case ParamType::Text:
      if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), item) == spec.choices.end())
        bad(spec, "unknown value '" + item + "'");
      return item;
  }
  bad(spec, "unparsable value");
}

}  // namespace

namespace {

// The items of a list as written, each expanded by the parameter's hook (FILE.h5 -> its models).
std::vector<std::string> written_items(const ParamSpec& spec, const std::string& text, char sep) {
  std::vector<std::string> items;
  for (const std::string& item : split(text, sep)) {
    if (item.empty()) bad(spec, "empty item in list '" + text + "'");
    if (!spec.expand) {
      items.push_back(item);
      continue;
    }
    std::vector<std::string> expanded;
    try {
      expanded = spec.expand(item);
    } catch (const BadInput& e) {
      bad(spec, "'" + item + "' " + e.what());
    }
    if (expanded.empty()) bad(spec, "'" + item + "' stands for no value");
    items.insert(items.end(), expanded.begin(), expanded.end());
  }
  return items;
}

// Each value checked, then no value given twice: by the parameter's identity, else by value (the
// canonical text of a parsed number). `spellings[i]` is how value i was written, for the message.
void check_each(const ParamSpec& spec, const std::vector<Value>& values, const std::vector<std::string>& spellings) {
  for (const Value& v : values) {
    if (spec.check) {
      if (auto err = spec.check(v)) bad(spec, quoted(canonical(v)) + " " + *err);
    }
  }
  std::map<std::string, std::size_t> seen;  // identity -> first index
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string key = spec.identity ? spec.identity(values[i]) : canonical(values[i]);
    const auto [it, fresh] = seen.emplace(key, i);
    if (fresh) continue;
    const std::string& first = spellings[it->second];
    if (first == spellings[i]) bad(spec, "value " + first + " is repeated");
    bad(spec, quoted(first) + " and " + quoted(spellings[i]) + " are the same value" +
                  (key != first && key != spellings[i] ? " (" + key + ")" : "") + ", repeated; give it once");
  }
}

// ListRole::InsidePoint: "a,b" or "a+b" is one value "a+b" whose items were checked one by one.
std::vector<Value> parse_in_point_list(const ParamSpec& spec, const std::string& text) {
  if (spec.type != ParamType::Text) bad(spec, "an in-point list must be a text parameter");
  std::string unified = text;
  std::replace(unified.begin(), unified.end(), ',', kInPointSeparator);
  std::vector<Value> items;
  const std::vector<std::string> written = written_items(spec, unified, kInPointSeparator);
  for (const std::string& item : written) items.push_back(parse_scalar(spec, item));
  check_each(spec, items, written);
  std::string joined;
  for (const Value& v : items) {
    if (!joined.empty()) joined += kInPointSeparator;
    joined += canonical(v);
  }
  return {Value{joined}};
}

}  // namespace

std::vector<std::string> in_point_items(const std::string& value) { return split(value, kInPointSeparator); }

std::vector<Value> parse_values(const ParamSpec& spec, const std::string& text) {
  if (trim(text).empty()) bad(spec, "empty value");
  if (spec.list == ListRole::InsidePoint) return parse_in_point_list(spec, text);
  std::vector<Value> values;
  std::vector<std::string> spellings;  // how each value was written ("2^4 of 2^2..2^5" in a range)
  for (const std::string& item : written_items(spec, text, ',')) {
    const auto dots = item.find("..");
    if (dots != std::string::npos && spec.type != ParamType::Text) {
      const std::string lo = trim(item.substr(0, dots)), hi = trim(item.substr(dots + 2));
      std::int64_t a, b;
      if (!parse_power(lo, a) || !parse_power(hi, b)) bad(spec, "range '" + item + "' must have the form 2^a..2^b");
      if (a > b) bad(spec, "range '" + item + "' is reversed (2^a..2^b needs a <= b)");
      for (std::int64_t k = a; k <= b; ++k) {
        values.push_back(power_of_two(spec, k, item));
        spellings.push_back("2^" + std::to_string(k) + " of " + item);
      }
    } else {
      values.push_back(parse_scalar(spec, item));
      spellings.push_back(item);
    }
  }
  check_each(spec, values, spellings);
  if (spec.list == ListRole::SingleValue && values.size() != 1)
    bad(spec, "takes exactly one value, got " + std::to_string(values.size()));
  return values;
}

const Value& Point::value(const std::string& name) const {
  for (const auto& [k, v] : values)
    if (k == name) return v;
  throw std::out_of_range("point has no parameter '" + name + "'");
}
std::int64_t Point::integer(const std::string& name) const { return std::get<std::int64_t>(value(name)); }
double Point::real(const std::string& name) const { return std::get<double>(value(name)); }
const std::string& Point::text(const std::string& name) const { return std::get<std::string>(value(name)); }

std::string Point::describe() const {
  std::string s;
  for (const auto& [k, v] : values)
    if (k != kModelFingerprint) s += (s.empty() ? "" : " ") + k + "=" + canonical(v);
  return s;
}

std::string point_id(const std::string& experiment, const std::vector<std::pair<std::string, Value>>& values) {
  std::map<std::string, std::string> sorted;
  for (const auto& [k, v] : values) sorted[k] = canonical(v);
  std::string text = std::string("schema=") + kSchema + "\nexperiment=" + experiment + "\n";
  for (const auto& [k, v] : sorted) text += k + "=" + v + "\n";
  return hex64(hash64(text));
}

std::size_t checked_grid_size(const std::vector<Axis>& axes) {
  // Saturating product: the sizes are multiplied as doubles too, so no product of axes wraps.
  std::size_t total = 1;
  double exact = 1.0;
  std::string shape;
  for (const Axis& a : axes) {
    exact *= double(a.values.size());
    total = exact <= double(kMaxGridPoints) ? total * a.values.size() : kMaxGridPoints + 1;
    if (a.values.size() > 1)
      shape += (shape.empty() ? "" : " x ") + std::to_string(a.values.size()) + " " + a.spec.flag();
  }
  if (total > kMaxGridPoints) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", exact);
    throw BadInput("the grid has " + std::string(count) + " points (" + shape + "; allowed: at most " +
                   std::to_string(kMaxGridPoints) +
                   " points per run, see docs/architecture.md#points-parts-merge-resume)");
  }
  return total;
}

Grid::Grid(std::string experiment, std::vector<Axis> axes, std::vector<ParamSpec> derived)
    : experiment_(std::move(experiment)), axes_(std::move(axes)), derived_(std::move(derived)) {
  // Cartesian product, the first declared axis varying slowest.
  const std::size_t total = checked_grid_size(axes_);
  points_.reserve(total);
  std::vector<std::size_t> digit(axes_.size(), 0);
  for (std::size_t i = 0; i < total; ++i) {
    Point p;
    p.index = i;
    for (std::size_t a = 0; a < axes_.size(); ++a) p.values.emplace_back(axes_[a].spec.name, axes_[a].values[digit[a]]);
    p.id = point_id(experiment_, p.values);
    for (const ParamSpec& d : derived_) {
      if (d.list != ListRole::Derived || !d.derive)
        throw std::logic_error("parameter '" + d.name + "' is not a derived parameter");
      Value v;
      try {
        v = d.derive(p);
      } catch (const BadInput& e) {
        throw BadInput(d.name + " of point " + p.describe() + ": " + e.what());
      }
      if (v.index() != std::size_t(d.type))
        throw std::logic_error("derived parameter '" + d.name + "' has the wrong type");
      p.values.emplace_back(d.name, std::move(v));
    }
    points_.push_back(std::move(p));
    for (std::size_t a = axes_.size(); a-- > 0;) {
      if (++digit[a] < axes_[a].values.size()) break;
      digit[a] = 0;
    }
  }
  std::map<std::string, std::string> sorted;
  for (const Axis& a : axes_) {
    std::string list;
    for (const Value& v : a.values) {
      if (!list.empty()) list += ',';
      list += canonical(v);
    }
    sorted[a.spec.name] = list;
  }
  config_text_ = "experiment = " + experiment_ + "\nschema = " + kSchema + "\n";
  for (const auto& [k, v] : sorted) config_text_ += k + " = " + v + "\n";
  fingerprint_ = hex64(hash64(config_text_));
}

}  // namespace sharp::runner

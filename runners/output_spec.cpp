#include "runners/output_spec.hpp"

#include <set>
#include <stdexcept>

namespace sharp::runner {
namespace {

OutputSpec make(std::string name, OutputKind kind, OutputType type, std::vector<std::string> shape, std::string unit,
                std::string meaning) {
  OutputSpec o;
  o.name = std::move(name);
  o.kind = kind;
  o.type = type;
  o.shape = std::move(shape);
  o.unit = std::move(unit);
  o.meaning = std::move(meaning);
  return o;
}

std::string shape_text(const std::vector<long long>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + (shape[i] < 0 ? std::string("*") : std::to_string(shape[i]));
  return s + "]";
}

std::string kind_text(OutputKind kind, OutputType type) {
  return std::string(type == OutputType::Real ? "real" : "integer") +
         (kind == OutputKind::Metric ? " metric" : " array");
}

std::string a_kind(OutputKind kind, bool integer) {
  return std::string(integer ? "an integer" : "a real") + (kind == OutputKind::Metric ? " metric" : " array");
}

bool any_rank(const OutputSpec& s) { return s.shape.size() == 1 && s.shape[0] == "..."; }

}  // namespace

std::string OutputSpec::placeholder() const {
  const auto a = name.find('<'), b = name.find('>');
  if (a == std::string::npos || b == std::string::npos || b < a) return "";
  return name.substr(a + 1, b - a - 1);
}

std::string OutputSpec::type_text() const {
  std::string t = kind_text(kind, type);
  if (kind == OutputKind::Array) {
    t += " [";
    for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + shape[i];
    t += "]";
  }
  return t;
}

OutputSpec metric_real(std::string name, std::string unit, std::string meaning) {
  return make(std::move(name), OutputKind::Metric, OutputType::Real, {}, std::move(unit), std::move(meaning));
}
OutputSpec metric_integer(std::string name, std::string unit, std::string meaning) {
  return make(std::move(name), OutputKind::Metric, OutputType::Integer, {}, std::move(unit), std::move(meaning));
}
OutputSpec array_real(std::string name, std::vector<std::string> shape, std::string unit, std::string meaning) {
  return make(std::move(name), OutputKind::Array, OutputType::Real, std::move(shape), std::move(unit),
              std::move(meaning));
}
OutputSpec array_integer(std::string name, std::vector<std::string> shape, std::string unit, std::string meaning) {
  return make(std::move(name), OutputKind::Array, OutputType::Integer, std::move(shape), std::move(unit),
              std::move(meaning));
}

void check_declarations(const std::string& experiment, const std::vector<OutputSpec>& specs,
                        const std::vector<ParamSpec>& params) {
  auto fail = [&](const std::string& what) {
    throw std::logic_error("experiment " + experiment + " declares " + what);
  };
  auto param = [&](const std::string& name) -> const ParamSpec* {
    for (const ParamSpec& p : params)
      if (p.name == name) return &p;
    return nullptr;
  };
  std::set<std::pair<int, std::string>> seen;
  for (const OutputSpec& s : specs) {
    if (s.name.empty() || s.meaning.empty()) fail("an output without a name or meaning");
    if (!seen.insert({int(s.kind), s.name}).second) fail("output '" + s.name + "' twice");
    if (s.is_template()) {
      const std::string ph = s.placeholder();
      const ParamSpec* p = param(ph);
      if (ph.empty()) fail("output '" + s.name + "' with a malformed placeholder");
      if (!s.items && !(p && p->list == ListRole::InsidePoint))
        fail("output '" + s.name + "' whose placeholder <" + ph +
             "> is neither an in-point list parameter nor given items");
      // An in-point list has one value for the whole grid, so every point gets the same /points
      // columns; items computed per point could differ, and the merge would refuse the file.
      if (s.kind == OutputKind::Metric && !(p && p->list == ListRole::InsidePoint))
        fail("metric '" + s.name + "' over <" + ph +
             ">, which is not an in-point list parameter "
             "(/points columns must be the same in every point; put per-point detail in an array)");
    }
    if (s.kind == OutputKind::Metric && !s.shape.empty()) fail("metric '" + s.name + "' with a shape");
    if (s.kind == OutputKind::Array) {
      if (s.shape.empty()) fail("array '" + s.name + "' without a shape");
      if (any_rank(s)) continue;
      for (const std::string& d : s.shape) {
        if (d == "*" || d.find_first_not_of("0123456789") == std::string::npos) continue;
        const ParamSpec* p = param(d);
        if (!p || p->type != ParamType::Integer)
          fail("array '" + s.name + "' with dimension '" + d + "' (allowed: a number, an integer parameter or *)");
      }
    }
  }
}

std::vector<ExpectedOutput> expected_outputs(const std::vector<OutputSpec>& specs, const Point& point) {
  std::vector<ExpectedOutput> out;
  for (const OutputSpec& s : specs) {
    ExpectedOutput e;
    e.spec = &s;
    e.any_rank = s.kind == OutputKind::Array && any_rank(s);
    if (s.kind == OutputKind::Array && !e.any_rank)
      for (const std::string& d : s.shape) {
        if (d == "*")
          e.shape.push_back(-1);
        else if (d.find_first_not_of("0123456789") == std::string::npos)
          e.shape.push_back(std::atoll(d.c_str()));
        else
          e.shape.push_back(point.integer(d));
      }
    if (!s.is_template()) {
      e.name = s.name;
      out.push_back(e);
      continue;
    }
    const std::string ph = s.placeholder();
    const std::vector<std::string> items = s.items ? s.items(point) : in_point_items(point.text(ph));
    const std::string token = "<" + ph + ">";
    const auto at = s.name.find(token);
    for (const std::string& item : items) {
      e.name = s.name.substr(0, at) + item + s.name.substr(at + token.size());
      out.push_back(e);
    }
  }
  return out;
}

void check_record(const std::string& experiment, const std::vector<OutputSpec>& specs, const Point& point,
                  const Record& record) {
  const std::string who = "experiment " + experiment + ": output '";
  std::set<std::string> metrics, arrays;
  for (const ExpectedOutput& e : expected_outputs(specs, point)) {
    const OutputSpec& s = *e.spec;
    const std::string declared = " (declared " + s.type_text() + ")";
    if (s.kind == OutputKind::Metric) {
      metrics.insert(e.name);
      const auto it = record.metrics.find(e.name);
      if (it == record.metrics.end()) throw std::runtime_error(who + e.name + "' is missing" + declared);
      const bool integer = std::holds_alternative<std::int64_t>(it->second);
      if (integer != (s.type == OutputType::Integer))
        throw std::runtime_error(who + e.name + "' is " + a_kind(OutputKind::Metric, integer) + declared);
      continue;
    }
    arrays.insert(e.name);
    const auto it = record.arrays.find(e.name);
    if (it == record.arrays.end()) throw std::runtime_error(who + e.name + "' is missing" + declared);
    const Array& a = it->second;
    const bool integer = std::holds_alternative<std::vector<std::int64_t>>(a.data);
    if (integer != (s.type == OutputType::Integer))
      throw std::runtime_error(who + e.name + "' is " + a_kind(OutputKind::Array, integer) + declared);
    std::size_t elements = 1;
    for (std::size_t d : a.shape) elements *= d;
    const std::size_t stored =
        integer ? std::get<std::vector<std::int64_t>>(a.data).size() : std::get<std::vector<double>>(a.data).size();
    std::vector<long long> got(a.shape.begin(), a.shape.end());
    if (elements != stored)
      throw std::runtime_error(who + e.name + "' holds " + std::to_string(stored) + " values for shape " +
                               shape_text(got));
    if (e.any_rank) continue;
    bool match = got.size() == e.shape.size();
    for (std::size_t d = 0; match && d < got.size(); ++d) match = e.shape[d] < 0 || e.shape[d] == got[d];
    if (!match)
      throw std::runtime_error(who + e.name + "' has shape " + shape_text(got) + ", declared " + shape_text(e.shape) +
                               declared);
  }
  for (const auto& [name, v] : record.metrics)
    if (!metrics.count(name)) throw std::runtime_error(who + name + "' (a metric) is not declared");
  for (const auto& [name, a] : record.arrays)
    if (!arrays.count(name)) throw std::runtime_error(who + name + "' (an array) is not declared");
}

}  // namespace sharp::runner

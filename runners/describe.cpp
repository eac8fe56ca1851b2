#include "runners/describe.hpp"

#include <cstdio>
#include <sstream>

namespace sharp::runner {
namespace {

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      q += '\\', q += char(c);
    else if (c == '\n')
      q += "\\n";
    else if (c == '\t')
      q += "\\t";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      q += buf;
    } else
      q += char(c);
  }
  return q + "\"";
}

std::string list_role(ListRole r) {
  switch (r) {
    case ListRole::GridAxis: return "grid";
    case ListRole::SingleValue: return "single";
    case ListRole::InsidePoint: return "in-point";
    case ListRole::Derived: return "derived";
  }
  return "grid";
}

}  // namespace

std::string describe_json(const Experiment& e, const std::vector<ParamSpec>& params) {
  std::ostringstream j;
  j << "{\n  \"experiment\": " << quote(e.name()) << ",\n  \"binary\": " << quote("sharp-" + e.name())
    << ",\n  \"summary\": " << quote(e.summary()) << ",\n  \"notes\": " << quote(e.notes()) << ",\n  \"parameters\": [";
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ParamSpec& p = params[i];
    j << (i ? "," : "") << "\n    {\"name\": " << quote(p.name)
      << ", \"flag\": " << quote(p.list == ListRole::Derived ? "" : p.flag())
      << ", \"type\": " << quote(type_name(p.type)) << ", \"default\": " << quote(p.default_value)
      << ", \"help\": " << quote(p.help) << ", \"allowed\": " << quote(p.allowed)
      << ", \"list\": " << quote(list_role(p.list)) << "}";
  }
  j << "\n  ],\n  \"outputs\": [";
  const std::vector<OutputSpec> outputs = e.outputs();
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const OutputSpec& o = outputs[i];
    j << (i ? "," : "") << "\n    {\"name\": " << quote(o.name)
      << ", \"kind\": " << quote(o.kind == OutputKind::Metric ? "metric" : "array")
      << ", \"type\": " << quote(o.type == OutputType::Real ? "real" : "integer") << ", \"shape\": [";
    for (std::size_t d = 0; d < o.shape.size(); ++d) j << (d ? ", " : "") << quote(o.shape[d]);
    std::string items = o.items_help;
    if (items.empty() && o.is_template()) items = "one per item of --" + o.placeholder();
    j << "], \"unit\": " << quote(o.unit) << ", \"meaning\": " << quote(o.meaning) << ", \"items\": " << quote(items)
      << "}";
  }
  j << "\n  ]\n}\n";
  return j.str();
}

}  // namespace sharp::runner

#include "runners/value.hpp"

#include <charconv>
#include <system_error>

namespace sharp::runner {

std::string canonical(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, *d);  // shortest round-trip representation
    return std::string(buf, res.ptr);
  }
  return std::get<std::string>(v);
}

std::string type_name(ParamType t) {
  switch (t) {
    case ParamType::Integer: return "integer";
    case ParamType::Real: return "real";
    case ParamType::Text: return "text";
  }
  return "?";
}

}  // namespace sharp::runner

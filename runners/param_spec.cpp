#include "runners/param_spec.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace sharp::runner {
namespace {

ParamSpec base_param(std::string name, ParamType type, std::string default_value, std::string help) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.default_value = std::move(default_value);
  p.help = std::move(help);
  return p;
}

}  // namespace

std::string ParamSpec::flag() const {
  std::string f = "--" + name;
  std::replace(f.begin() + 2, f.end(), '_', '-');
  return f;
}

namespace {

// A maximum as people write it: 2^30 rather than 1073741824.
std::string maximum_text(const Value& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v); i && *i >= 1024 && std::has_single_bit(std::uint64_t(*i))) {
    std::string power = "2^";
    power += std::to_string(std::countr_zero(std::uint64_t(*i)));
    return power;
  }
  return canonical(v);
}

bool above(const Value& v, const Value& maximum) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i > std::get<std::int64_t>(maximum);
  if (const auto* d = std::get_if<double>(&v)) return *d > std::get<double>(maximum);
  return false;
}

}  // namespace

ParamSpec ParamSpec::at_most(Value maximum) const {
  if (type == ParamType::Text || (type == ParamType::Integer) != std::holds_alternative<std::int64_t>(maximum))
    throw std::logic_error("parameter " + name + ": a maximum must have the parameter's numeric type");
  ParamSpec p = *this;
  const std::string text = maximum_text(maximum);
  p.allowed += ", at most " + text;
  p.check = [previous = check, maximum, text](const Value& v) -> std::optional<std::string> {
    if (previous)
      if (auto err = previous(v)) return err;
    if (above(v, maximum)) return "is above the maximum " + text;
    return std::nullopt;
  };
  return p;
}

ParamSpec integer_param(std::string name, std::string default_value, std::string help, std::int64_t minimum) {
  ParamSpec p = base_param(std::move(name), ParamType::Integer, std::move(default_value), std::move(help));
  p.allowed = "integers >= " + std::to_string(minimum);
  p.check = [minimum](const Value& v) -> std::optional<std::string> {
    if (std::get<std::int64_t>(v) < minimum) return "must be >= " + std::to_string(minimum);
    return std::nullopt;
  };
  return p;
}

ParamSpec real_param(std::string name, std::string default_value, std::string help) {
  ParamSpec p = base_param(std::move(name), ParamType::Real, std::move(default_value), std::move(help));
  p.allowed = "finite reals";
  p.check = [](const Value&) -> std::optional<std::string> { return std::nullopt; };
  return p;
}

ParamSpec real_param_above(std::string name, std::string default_value, std::string help, double exclusive_minimum) {
  ParamSpec p = real_param(std::move(name), std::move(default_value), std::move(help));
  p.allowed = "reals > " + canonical(exclusive_minimum);
  p.check = [exclusive_minimum](const Value& v) -> std::optional<std::string> {
    if (!(std::get<double>(v) > exclusive_minimum)) return "must be > " + canonical(exclusive_minimum);
    return std::nullopt;
  };
  return p;
}

ParamSpec real_param_at_least(std::string name, std::string default_value, std::string help, double minimum) {
  ParamSpec p = real_param(std::move(name), std::move(default_value), std::move(help));
  p.allowed = "reals >= " + canonical(minimum);
  p.check = [minimum](const Value& v) -> std::optional<std::string> {
    if (!(std::get<double>(v) >= minimum)) return "must be >= " + canonical(minimum);
    return std::nullopt;
  };
  return p;
}

ParamSpec text_param(std::string name, std::string default_value, std::string help, std::vector<std::string> choices) {
  ParamSpec p = base_param(std::move(name), ParamType::Text, std::move(default_value), std::move(help));
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  p.allowed = "one of: " + list;
  p.choices = std::move(choices);
  return p;
}

ParamSpec derived_text_param(std::string name, std::string help, std::string derived_from,
                             std::function<Value(const Point&)> derive) {
  ParamSpec p = base_param(std::move(name), ParamType::Text, "", std::move(help));
  p.allowed = "not set: derived from " + derived_from;
  p.list = ListRole::Derived;
  p.derive = std::move(derive);
  return p;
}

}  // namespace sharp::runner

#include "normalisers/spec.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "core/errors.hpp"
#include "normalisers/registry.hpp"

namespace sharp::norm {
namespace {

std::string allowed_keys(const NormaliserEntry& entry) {
  if (entry.parameters.empty()) return "none";
  std::string out;
  for (const ParameterInfo& p : entry.parameters) out += (out.empty() ? "" : ", ") + p.key;
  for (const ParameterAlias& a : entry.aliases) out += " (or " + a.key + ")";
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string shortest(double x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

double parse_number(std::string_view name, std::string_view key, std::string_view text) {
  double value = 0.0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (!text.empty() && *first == '+') ++first;  // from_chars rejects a leading '+'
  auto res = std::from_chars(first, last, value);
  if (text.empty() || res.ec != std::errc() || res.ptr != last || !std::isfinite(value)) {
    throw BadInput("normaliser '" + std::string(name) + "': parameter " + std::string(key) + "='" + std::string(text) +
                   "' is not a finite number");
  }
  return value;
}

}  // namespace

double Spec::param(const std::string& key) const {
  auto it = params.find(key);
  if (it == params.end()) throw std::out_of_range("normaliser '" + name + "' has no parameter " + key);
  return it->second;
}

std::vector<std::string> normaliser_names() {
  std::vector<std::string> names;
  for (const NormaliserEntry* e : normaliser_entries()) names.push_back(e->name);
  return names;
}

namespace detail {

Spec parse_spec_text(std::string_view text, const LearnedValue& learned) {
  text = trim(text);
  const std::string whole(text);
  const std::size_t colon = text.find(':');
  const std::string name(trim(text.substr(0, colon)));
  const NormaliserEntry* entry = find_normaliser(name);
  if (entry == nullptr) {
    throw BadInput("unknown normaliser '" + name + "' in spec '" + whole + "' (allowed: " + normaliser_names_text() +
                   ")");
  }

  Spec spec;
  spec.name = name;
  std::map<std::string, double> given;
  std::map<std::string, bool> is_learned;
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  while (colon != std::string_view::npos) {
    const std::size_t next = rest.find(':');
    const std::string_view item = trim(rest.substr(0, next));
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw BadInput("normaliser '" + name + "': expected key=value, got '" + std::string(item) +
                     "' (parameters: " + allowed_keys(*entry) + ")");
    }
    std::string key(trim(item.substr(0, eq)));
    const std::string_view value_text = trim(item.substr(eq + 1));
    double value = 0.0;
    if (learned && value_text == "learn") {
      const LearnableInfo* learnable = entry->learnable_parameter(key);
      if (learnable == nullptr)
        throw BadInput("normaliser '" + whole + "': parameter '" + key +
                       "' cannot be learned (learnable: " + learnable_parameters_text() + ")");
      value = learned(*entry, *learnable);
      is_learned[key] = true;
    } else {
      const ParameterAlias* alias = nullptr;
      for (const ParameterAlias& a : entry->aliases)
        if (a.key == key) alias = &a;
      if (alias == nullptr && entry->parameter(key) == nullptr) {
        throw BadInput("normaliser '" + name + "': unknown parameter '" + key +
                       "' (parameters: " + allowed_keys(*entry) + ")");
      }
      value = parse_number(name, key, value_text);
      if (alias != nullptr) {
        if (!alias->range.contains(value)) {
          throw BadInput("normaliser '" + name + "': parameter " + key + "=" + shortest(value) +
                         " out of range (allowed: " + alias->range.text(key) + ")");
        }
        key = alias->target;
        value = alias->to_target(value);
      }
    }
    if (given.count(key) != 0) {
      throw BadInput("normaliser '" + name + "': parameter " + key + " given twice in '" + whole + "'");
    }
    given[key] = value;
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }

  for (const ParameterInfo& p : entry->parameters) {
    auto it = given.find(p.key);
    if (it == given.end() && !p.default_value) {
      throw BadInput("normaliser '" + name + "': missing parameter " + p.key + " (" + p.range.text(p.key) + ")");
    }
    const double value = it != given.end() ? it->second : *p.default_value;
    if (!is_learned[p.key] && !p.range.contains(value)) {
      throw BadInput("normaliser '" + name + "': parameter " + p.key + "=" + shortest(value) +
                     " out of range (allowed: " + p.range.text(p.key) + ")");
    }
    spec.params[p.key] = value;
  }
  if (entry->check) entry->check(spec);
  return spec;
}

}  // namespace detail

Spec parse_spec(std::string_view text) { return detail::parse_spec_text(text, {}); }

std::string format_spec(const Spec& spec) {
  std::string out = spec.name;
  const NormaliserEntry* entry = find_normaliser(spec.name);
  if (entry == nullptr) return out;
  for (const ParameterInfo& p : entry->parameters) {
    auto it = spec.params.find(p.key);
    if (it != spec.params.end()) out += ":" + p.key + "=" + shortest(it->second);
  }
  return out;
}

}  // namespace sharp::norm

#include "normalisers/spec.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "core/errors.hpp"

namespace sharp::norm {
namespace {

// One declared parameter: its name, default (NaN = required), the allowed range as text for error
// messages, and the range check itself.
struct ParamDecl {
  std::string key;
  double default_value;
  std::string allowed;
  std::function<bool(double)> valid;
};

struct NameDecl {
  std::string name;
  std::vector<ParamDecl> params;
};

constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();

bool positive(double x) { return x > 0.0; }
bool nonnegative(double x) { return x >= 0.0; }
bool any_finite(double) { return true; }

const std::vector<NameDecl>& declarations() {
  static const std::vector<NameDecl> decls = {
      {"softmax", {{"beta", 1.0, "beta > 0", positive}}},   // theta=T is accepted as beta=1/T
      {"adaptive", {}},
      {"ssmax", {{"s", kRequired, "s > 0", positive}}},
      {"topk", {{"k", kRequired, "k an integer >= 1",
                 [](double k) { return k >= 1.0 && k == std::floor(k) && k <= 9.0e15; }}}},
      {"argmax", {}},
      {"sparsemax", {}},
      {"entmax15", {}},
      {"entmax", {{"alpha", kRequired, "1 < alpha <= 2", [](double a) { return a > 1.0 && a <= 2.0; }}}},
      {"asentmax", {{"b", kRequired, "b >= 0", nonnegative},
                    {"gamma", kRequired, "gamma finite", any_finite},
                    {"delta", 1.0, "delta >= 0", nonnegative}}},
      {"stieltjes", {{"q", kRequired, "q >= 1", [](double q) { return q >= 1.0; }}}},
  };
  return decls;
}

std::string join_names() {
  std::string out;
  for (const auto& d : declarations()) out += (out.empty() ? "" : ", ") + d.name;
  return out;
}

std::string allowed_keys(const NameDecl& decl) {
  if (decl.params.empty()) return "none";
  std::string out;
  for (const auto& p : decl.params) out += (out.empty() ? "" : ", ") + p.key;
  if (decl.name == "softmax") out += " (or theta)";
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
  if (!text.empty() && *first == '+') ++first;   // from_chars rejects a leading '+'
  auto res = std::from_chars(first, last, value);
  if (text.empty() || res.ec != std::errc() || res.ptr != last || !std::isfinite(value)) {
    throw BadInput("normaliser '" + std::string(name) + "': parameter " + std::string(key) + "='" +
                   std::string(text) + "' is not a finite number");
  }
  return value;
}

}  // namespace

double Spec::param(const std::string& key) const {
  auto it = params.find(key);
  if (it == params.end()) throw std::out_of_range("normaliser '" + name + "' has no parameter " + key);
  return it->second;
}

const std::vector<std::string>& normaliser_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& d : declarations()) v.push_back(d.name);
    return v;
  }();
  return names;
}

Spec parse_spec(std::string_view text) {
  text = trim(text);
  const std::string whole(text);
  const std::size_t colon = text.find(':');
  const std::string name(trim(text.substr(0, colon)));
  const NameDecl* decl = nullptr;
  for (const auto& d : declarations()) {
    if (d.name == name) decl = &d;
  }
  if (decl == nullptr) {
    throw BadInput("unknown normaliser '" + name + "' in spec '" + whole + "' (allowed: " + join_names() + ")");
  }

  Spec spec;
  spec.name = name;
  std::map<std::string, double> given;
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  while (colon != std::string_view::npos) {
    const std::size_t next = rest.find(':');
    const std::string_view item = trim(rest.substr(0, next));
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw BadInput("normaliser '" + name + "': expected key=value, got '" + std::string(item) +
                     "' (parameters: " + allowed_keys(*decl) + ")");
    }
    std::string key(trim(item.substr(0, eq)));
    const bool theta_alias = (name == "softmax" && key == "theta");
    bool known = theta_alias;
    for (const auto& p : decl->params) known = known || p.key == key;
    if (!known) {
      throw BadInput("normaliser '" + name + "': unknown parameter '" + key + "' (parameters: " +
                     allowed_keys(*decl) + ")");
    }
    double value = parse_number(name, key, trim(item.substr(eq + 1)));
    if (theta_alias) {
      if (!(value > 0.0)) {
        throw BadInput("normaliser 'softmax': parameter theta=" + shortest(value) +
                       " out of range (allowed: theta > 0)");
      }
      key = "beta";
      value = 1.0 / value;
    }
    if (given.count(key) != 0) {
      throw BadInput("normaliser '" + name + "': parameter " + key + " given twice in '" + whole + "'");
    }
    given[key] = value;
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }

  for (const auto& p : decl->params) {
    auto it = given.find(p.key);
    double value = it != given.end() ? it->second : p.default_value;
    if (std::isnan(value)) {
      throw BadInput("normaliser '" + name + "': missing parameter " + p.key + " (" + p.allowed + ")");
    }
    if (!p.valid(value)) {
      throw BadInput("normaliser '" + name + "': parameter " + p.key + "=" + shortest(value) +
                     " out of range (allowed: " + p.allowed + ")");
    }
    spec.params[p.key] = value;
  }
  if (name == "asentmax" && spec.params["b"] + spec.params["delta"] <= 0.0) {
    throw BadInput("normaliser 'asentmax': b and delta are both 0 (allowed: b + delta > 0)");
  }
  return spec;
}

std::vector<Spec> parse_spec_list(std::string_view text) {
  const std::string whole(text);
  std::vector<Spec> specs;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    if (item.empty()) throw BadInput("empty normaliser in list '" + whole + "'");
    specs.push_back(parse_spec(item));
    if (comma == std::string_view::npos) break;
    text = text.substr(comma + 1);
  }
  return specs;
}

std::string format_spec(const Spec& spec) {
  std::string out = spec.name;
  for (const auto& d : declarations()) {
    if (d.name != spec.name) continue;
    for (const auto& p : d.params) {
      auto it = spec.params.find(p.key);
      if (it != spec.params.end()) out += ":" + p.key + "=" + shortest(it->second);
    }
  }
  return out;
}

}  // namespace sharp::norm

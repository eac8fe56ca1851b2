#include "normalisers/registry.hpp"

#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/errors.hpp"

namespace sharp::norm {
namespace {

// By name, so listings are sorted whatever the order of static initialisation.
std::map<std::string, NormaliserEntry, std::less<>>& registry() {
  static std::map<std::string, NormaliserEntry, std::less<>> entries;
  return entries;
}

std::string shortest(double x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, res.ptr);
}

bool well_formed_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

}  // namespace

bool ParameterRange::contains(double x) const {
  if (!std::isfinite(x)) return false;
  if (low_inclusive ? x < low : !(x > low)) return false;
  if (high_inclusive ? x > high : !(x < high)) return false;
  return !integer || (x == std::floor(x) && x <= 9.0e15);
}

std::string ParameterRange::text(const std::string& key) const {
  const bool has_low = std::isfinite(low), has_high = std::isfinite(high);
  const std::string lo_op = low_inclusive ? " <= " : " < ", hi_op = high_inclusive ? " <= " : " < ";
  if (integer) {
    std::string out = key + " an integer";
    if (has_low) out += (low_inclusive ? " >= " : " > ") + shortest(low);
    if (has_high) out += (high_inclusive ? " <= " : " < ") + shortest(high);
    return out;
  }
  if (has_low && has_high) return shortest(low) + lo_op + key + hi_op + shortest(high);
  if (has_low) return key + (low_inclusive ? " >= " : " > ") + shortest(low);
  if (has_high) return key + hi_op + shortest(high);
  return key + " finite";
}

const ParameterInfo* NormaliserEntry::parameter(std::string_view key) const {
  for (const ParameterInfo& p : parameters)
    if (p.key == key) return &p;
  return nullptr;
}

const LearnableInfo* NormaliserEntry::learnable_parameter(std::string_view key) const {
  for (const LearnableInfo& l : learnable)
    if (l.key == key) return &l;
  return nullptr;
}

void register_normaliser(NormaliserEntry entry) {
  const std::string name = entry.name;
  auto fail = [&](const std::string& what) { throw std::logic_error("normaliser registry: '" + name + "' " + what); };
  if (!well_formed_name(name)) fail("is not a name of lower case letters, digits and '_'");
  if (!entry.make) fail("has no factory");
  for (const ParameterAlias& a : entry.aliases)
    if (!entry.parameter(a.target) || !a.to_target) fail("has an alias '" + a.key + "' of no parameter");
  bool per_query = false;
  for (const LearnableInfo& l : entry.learnable) {
    if (!entry.parameter(l.key) || !l.initial_raw || !l.value || !l.derivative)
      fail("has an incomplete learnable parameter '" + l.key + "'");
    if (!l.shape.empty() && l.shape != std::vector<std::string>{"d_model"})
      fail("has a learnable parameter '" + l.key + "' of a shape other than {} or {\"d_model\"}");
    per_query = per_query || l.per_query();
  }
  if (!registry().emplace(name, std::move(entry)).second) fail("is registered twice");
  try {  // parsing needs the entry registered
    const Spec example = parse_spec(registry().find(name)->second.example);
    if (per_query && !make_normaliser(example)->takes_row_parameters()) {
      registry().erase(name);
      fail("learns a parameter per query but its normaliser takes no row parameters");
    }
  } catch (const BadInput& e) {
    registry().erase(name);
    fail(std::string("has an example that is no spec: ") + e.what());
  }
}

std::vector<const NormaliserEntry*> normaliser_entries() {
  std::vector<const NormaliserEntry*> out;
  for (const auto& [name, entry] : registry()) out.push_back(&entry);
  return out;
}

const NormaliserEntry* find_normaliser(std::string_view name) {
  const auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

const NormaliserEntry& normaliser_entry(std::string_view name) {
  if (const NormaliserEntry* e = find_normaliser(name)) return *e;
  throw BadInput("unknown normaliser '" + std::string(name) + "' (allowed: " + normaliser_names_text() + ")");
}

std::string normaliser_names_text() {
  std::string out;
  for (const auto& [name, entry] : registry()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string learnable_parameters_text() {
  std::string out;
  for (const auto& [name, entry] : registry())
    for (const LearnableInfo& l : entry.learnable)
      out += (out.empty() ? "" : ", ") + name + ":" + l.key + (l.per_query() ? " (per query)" : "");
  return out.empty() ? "none" : out;
}

std::unique_ptr<Normaliser> make_normaliser(const Spec& spec) { return normaliser_entry(spec.name).make(spec); }

std::unique_ptr<Normaliser> make_normaliser(std::string_view spec_text) {
  return make_normaliser(parse_spec(spec_text));
}

}  // namespace sharp::norm

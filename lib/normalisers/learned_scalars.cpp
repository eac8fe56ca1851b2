#include "normalisers/learned_scalars.hpp"

#include <stdexcept>

#include "core/errors.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/registry.hpp"

namespace sharp::norm {
namespace {

const LearnableInfo& info(const LearnableSpec& spec, std::size_t i) {
  return *normaliser_entry(spec.spec.name).learnable_parameter(spec.learned.at(i));
}

}  // namespace

bool LearnableSpec::any_per_query() const {
  for (const bool q : per_query)
    if (q) return true;
  return false;
}

void refuse_per_query(const LearnableSpec& spec, const std::string& trainer) {
  for (std::size_t i = 0; i < spec.learned.size(); ++i)
    if (spec.per_query[i])
      throw BadInput("normaliser '" + format_spec(spec.spec) + "': parameter '" + spec.learned[i] +
                     "' is learned per query, from a transformer's hidden states; " + trainer +
                     " learns scalars only (docs/science.md#learned-scalars)");
}

const LearnableInfo& learnable_info(const LearnableSpec& spec, std::size_t i) { return info(spec, i); }

LearnableSpec parse_learnable_spec(std::string_view text, std::size_t train_length) {
  std::vector<std::string> learned;
  LearnableSpec out;
  out.spec = detail::parse_spec_text(text, [&](const NormaliserEntry& entry, const LearnableInfo& l) {
    learned.push_back(l.key);
    return l.value(l.initial_raw(train_length));
  });
  const std::vector<std::string> names = make_normaliser(out.spec)->parameter_names();
  for (std::size_t k = 0; k < names.size(); ++k)
    for (const std::string& key : learned)
      if (names[k] == key) {
        out.learned.push_back(key);
        out.index.push_back(k);
        out.per_query.push_back(normaliser_entry(out.spec.name).learnable_parameter(key)->per_query());
      }
  if (out.learned.size() != learned.size())
    throw std::logic_error("normaliser '" + out.spec.name + "': a learnable parameter is not among parameter_names()");
  return out;
}

double learned_initial_raw(const LearnableSpec& spec, std::size_t i, std::size_t train_length) {
  return info(spec, i).initial_raw(train_length);
}

double learned_value(const LearnableSpec& spec, std::size_t i, double raw) { return info(spec, i).value(raw); }

double learned_derivative(const LearnableSpec& spec, std::size_t i, double raw) {
  return info(spec, i).derivative(raw);
}

Spec bind(const LearnableSpec& spec, const double* raw) {
  Spec out = spec.spec;
  for (std::size_t i = 0; i < spec.learned.size(); ++i) out.params[spec.learned[i]] = learned_value(spec, i, raw[i]);
  return out;
}

}  // namespace sharp::norm

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

std::string shape_text(const std::vector<std::string>& shape) {
  std::string out;
  for (const std::string& d : shape) out += (out.empty() ? "" : ", ") + d;
  return "[" + out + "]";
}

}  // namespace

LearnableSpec parse_learnable_spec(std::string_view text, std::size_t train_length) {
  std::vector<std::string> learned;
  LearnableSpec out;
  out.spec = detail::parse_spec_text(text, [&](const NormaliserEntry& entry, const LearnableInfo& l) {
    if (!l.shape.empty())
      throw BadInput("normaliser '" + std::string(text) + "': parameter '" + l.key + "' is learned with shape " +
                     shape_text(l.shape) + " per head; the trainers learn scalars only");
    learned.push_back(l.key);
    return l.value(l.initial_raw(train_length));
  });
  const std::vector<std::string> names = make_normaliser(out.spec)->parameter_names();
  for (std::size_t k = 0; k < names.size(); ++k)
    for (const std::string& key : learned)
      if (names[k] == key) {
        out.learned.push_back(key);
        out.index.push_back(k);
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

#include "normalisers/learned_scalars.hpp"

#include <cmath>

#include "core/errors.hpp"
#include "normalisers/normaliser.hpp"

namespace sharp::norm {
namespace {

// A placeholder that passes parse_spec's range check while the real value is the learned one.
double placeholder(const std::string& name, const std::string& key) {
  if (name == "ssmax" && key == "s") return 1.0;
  if (name == "entmax" && key == "alpha") return 1.5;
  if (name == "asentmax" && (key == "b" || key == "gamma")) return 1.0;
  return 0.0;
}

bool learnable(const std::string& name, const std::string& key) { return placeholder(name, key) != 0.0; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return x > 30.0 ? x : std::log1p(std::exp(x)); }

}  // namespace

LearnableSpec parse_learnable_spec(std::string_view text, std::size_t train_length) {
  text = trim(text);
  const std::string name(text.substr(0, text.find(':')));
  std::string rewritten = name;
  std::vector<std::string> learned;
  std::size_t pos = text.find(':');
  while (pos != std::string_view::npos) {
    const std::size_t next = text.find(':', pos + 1);
    const std::string_view item = text.substr(pos + 1, next == std::string_view::npos ? next : next - pos - 1);
    const std::size_t eq = item.find('=');
    if (eq != std::string_view::npos && trim(item.substr(eq + 1)) == "learn") {
      const std::string key(trim(item.substr(0, eq)));
      if (!learnable(name, key))
        throw BadInput("normaliser '" + std::string(text) + "': parameter '" + key +
                       "' cannot be learned (learnable: ssmax:s, entmax:alpha, asentmax:b, asentmax:gamma)");
      learned.push_back(key);
      rewritten.append(":").append(key).append("=").append(std::to_string(placeholder(name, key)));
    } else {
      rewritten.append(":").append(item);
    }
    pos = next;
  }
  LearnableSpec out;
  out.spec = parse_spec(rewritten);
  if (!learned.empty() && train_length < 2 && name == "ssmax")
    throw BadInput("ssmax:s=learn needs a training length >= 2 (initial s = 1/ln(length))");
  const std::vector<std::string> names = make_normaliser(out.spec)->parameter_names();
  for (std::size_t k = 0; k < names.size(); ++k)
    for (const std::string& key : learned)
      if (names[k] == key) {
        out.learned.push_back(key);
        out.index.push_back(k);
      }
  for (std::size_t i = 0; i < out.learned.size(); ++i)
    out.spec.params[out.learned[i]] = learned_value(out, i, learned_initial_raw(out, i, train_length));
  return out;
}

double learned_initial_raw(const LearnableSpec& spec, std::size_t i, std::size_t train_length) {
  if (spec.spec.name == "ssmax") return 1.0 / std::log(double(train_length));
  return 0.0;
}

double learned_value(const LearnableSpec& spec, std::size_t i, double raw) {
  const std::string& key = spec.learned.at(i);
  if (key == "s") return raw;
  if (key == "alpha") return 1.01 + 0.99 * sigmoid(raw);
  if (key == "b") return softplus(raw);
  return 2.0 * std::tanh(raw);   // gamma
}

double learned_derivative(const LearnableSpec& spec, std::size_t i, double raw) {
  const std::string& key = spec.learned.at(i);
  if (key == "s") return 1.0;
  if (key == "alpha") return 0.99 * sigmoid(raw) * (1.0 - sigmoid(raw));
  if (key == "b") return sigmoid(raw);
  const double t = std::tanh(raw);
  return 2.0 * (1.0 - t * t);
}

Spec bind(const LearnableSpec& spec, const double* raw) {
  Spec out = spec.spec;
  for (std::size_t i = 0; i < spec.learned.size(); ++i) out.params[spec.learned[i]] = learned_value(spec, i, raw[i]);
  return out;
}

}  // namespace sharp::norm

#include "text_model/task_mix.hpp"

#include "core/errors.hpp"
#include "rng/counter_rng.hpp"

namespace sharp::text_model {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

}  // namespace

std::vector<std::pair<text::Algorithm, int>> TaskMix::pairs() const {
  std::vector<std::pair<text::Algorithm, int>> out;
  for (text::Algorithm a : algorithms) {
    for (int n : lengths) {
      if (text::length_refusal(a, n, trace).empty()) out.emplace_back(a, n);
    }
  }
  return out;
}

std::vector<text::Algorithm> parse_algorithm_mix(const std::string& text) {
  std::vector<text::Algorithm> out;
  for (const std::string& name : split(text, '+')) out.push_back(text::parse_algorithm(name));
  return out;
}

std::vector<int> parse_lengths(const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : split(text, '+')) {
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) throw BadInput("'" + item + "' is not a length");
    out.push_back(n);
  }
  return out;
}

text::Sample draw_mixed(const TaskMix& mix, std::uint64_t key, std::uint64_t index) {
  const auto pairs = mix.pairs();
  if (pairs.empty()) throw BadInput("no (algorithm, length) pair of the mix may be drawn");
  const auto& [a, n] = pairs[rng::bits(rng::child_key(key, 0x70616972ULL), index) % pairs.size()];
  return text::draw_sample(key, a, n, index, mix.trace);
}

}  // namespace sharp::text_model

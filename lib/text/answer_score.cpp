#include "text/answer_score.hpp"

#include <vector>

namespace sharp::text {
namespace {

// "[a b c]" -> {a, b, c}; "(x, y)" and "x, y" -> {x, y}; "3" -> {3}. ok = false when the brackets
// differ from the expected form.
std::vector<std::string> elements(const std::string& text, char open, bool& ok) {
  std::string body = text;
  if (open != 0) {
    const char close = open == '[' ? ']' : ')';
    if (body.size() < 2 || body.front() != open || body.back() != close) {
      ok = false;
      return {};
    }
    body = body.substr(1, body.size() - 2);
  }
  const std::string sep = open == '[' ? " " : ", ";
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = body.find(sep, start);
    out.push_back(body.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + sep.size();
  }
  ok = true;
  return out;
}

char opening(const std::string& s) { return !s.empty() && (s.front() == '[' || s.front() == '(') ? s.front() : 0; }

}  // namespace

AnswerScore score_answer(const Sample& expected, const std::string& generated, bool trace) {
  AnswerScore s;
  bool ok = true;
  const char open = opening(expected.final_output);
  s.elements_expected = int(elements(expected.final_output, open, ok).size());
  s.terminated = generated.size() >= 2 && generated.compare(generated.size() - 2, 2, "\n\n") == 0;
  if (!s.terminated) return s;
  s.exact_answer = generated == expected.answer;
  std::string final = generated.substr(0, generated.size() - 2);
  if (trace) {
    const std::size_t bar = final.rfind(" | ");
    if (bar == std::string::npos) return s;
    final = final.substr(bar + 3);
  }
  s.exact_final = final == expected.final_output;
  const std::vector<std::string> want = elements(expected.final_output, open, ok);
  const std::vector<std::string> got = elements(final, open, ok);
  if (!ok) return s;
  for (std::size_t i = 0; i < want.size() && i < got.size(); ++i) s.elements_right += got[i] == want[i] ? 1 : 0;
  return s;
}

}  // namespace sharp::text

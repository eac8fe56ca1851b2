#pragma once
// What an experiment declares about each of its outputs, as ParamSpec does for parameters
// (docs/architecture.md#declared-outputs): name, kind (a scalar metric, one /points column; or an
// array under /arrays/<point id>/), element type, shape, unit and a one-line meaning. The runner
// checks every record against the declarations before it is written (check_record), --help lists
// them, --describe prints them, and results/README.md is generated from them.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runners/grid.hpp"
#include "runners/record.hpp"

namespace sharp::runner {

enum class OutputKind { Metric, Array };
enum class OutputType { Real, Integer };  // float64 or int64 elements

struct OutputSpec {
  // A literal ("alpha_max") or a template with one placeholder in angle brackets
  // ("accuracy.<normaliser>", "param.<tensor>"): one output per item of a list. The items are
  // given by `items` when set; otherwise the placeholder must name an in-point list parameter
  // (ListRole::InsidePoint) and its items in the point are used. A metric template must range
  // over an in-point list (one value for the whole grid), so every point has the same columns.
  std::string name;
  OutputKind kind = OutputKind::Metric;
  OutputType type = OutputType::Real;
  // Arrays only, one entry per dimension: a literal ("5"), an integer parameter's name ("trials"),
  // or "*" (any length). A single "..." allows any number of dimensions of any length.
  std::vector<std::string> shape;
  std::string unit;  // "" for a pure number; e.g. "nats", "steps", "1 (fraction)"
  std::string meaning;  // one line
  // The placeholder's items for a point (e.g. the tensors of the model a point trains).
  std::function<std::vector<std::string>(const Point&)> items;
  std::string items_help;  // what the items are, for --help and the README ("one per model tensor")

  bool is_template() const { return name.find('<') != std::string::npos; }
  std::string placeholder() const;  // "normaliser" for "accuracy.<normaliser>"; "" for a literal
  // "metric real", "array int64 [trials]", ...
  std::string type_text() const;
};

OutputSpec metric_real(std::string name, std::string unit, std::string meaning);
OutputSpec metric_integer(std::string name, std::string unit, std::string meaning);
OutputSpec array_real(std::string name, std::vector<std::string> shape, std::string unit, std::string meaning);
OutputSpec array_integer(std::string name, std::vector<std::string> shape, std::string unit, std::string meaning);

// The concrete outputs of one point: every template expanded, each with its expected shape
// (dimensions resolved against the point; -1 for "*"; rank unchecked when any_rank).
struct ExpectedOutput {
  std::string name;
  const OutputSpec* spec = nullptr;
  std::vector<long long> shape;
  bool any_rank = false;
};
std::vector<ExpectedOutput> expected_outputs(const std::vector<OutputSpec>& specs, const Point& point);

// Throws std::runtime_error "experiment E: output 'X' ..." when the record has an undeclared
// output, lacks a declared one, or holds one of another kind, type or shape.
void check_record(const std::string& experiment, const std::vector<OutputSpec>& specs, const Point& point,
                  const Record& record);

// Checks that the declarations are well formed (unique names, known placeholders and dimension
// names); a failure is a programming error of the experiment (std::logic_error).
void check_declarations(const std::string& experiment, const std::vector<OutputSpec>& specs,
                        const std::vector<ParamSpec>& params);

}  // namespace sharp::runner

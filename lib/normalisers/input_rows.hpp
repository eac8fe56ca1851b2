#pragma once
// The checks a front end makes on rows of logits a user hands in, with their messages, written once
// so that sharp-normalise and the Python module `sharp` refuse the same rows with the same words
// (docs/architecture.md#errors-and-exit-codes). A row is named by its 1-based line: the CLI's input
// line; for an array, row r of its [rows, n] view is line r + 1 and entry c is column c + 1.
// (The kernels check NaN, +inf and fully masked rows themselves, cheaply, as sharp::NumericError;
// these checks give the user-facing sharp::BadInput.)
#include <cstddef>
#include <optional>
#include <string>

namespace sharp::norm {

// Why one logit is refused ("NaN logit (allowed: ...)", "+inf logit (...)"), or nullopt; -inf is a
// masked entry and allowed.
std::optional<std::string> logit_problem(double x);

// Throws sharp::BadInput "line L, column C: <logit_problem>" for the first refused logit, then
// "line L: empty row (expected logits)", "line L: every entry is masked (-inf)", or "line L: the
// logits span more than the largest double (...)" (every normaliser works with z - max z, so such a
// row would come out wrong, e.g. for softmax:beta=1e-308). Returns normally for a good row.
template <class T>
void check_input_row(const T* z, std::size_t n, std::size_t line);

}  // namespace sharp::norm

#pragma once
// Typed exceptions of the suite. The error policy (docs/architecture.md#errors-and-exit-codes): bad user input is one clear
// line and exit status 2; numeric failures name what failed; main catches, prints and exits.
#include <stdexcept>
#include <string>

namespace sharp {

// Bad user input (a flag, a parameter value, an input line): exit status 2, nothing written.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A numeric failure that must not pass silently (a NaN in a row, a solver that did not converge).
class NumericError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sharp

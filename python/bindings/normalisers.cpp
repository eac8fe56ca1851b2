// sharp.normalise / normalise_backward on C-contiguous float32 or float64 arrays whose last axis
// holds the rows (python/sharp/__init__.py moves the axis and converts other arrays first). The
// arrays are used in place (no copy: noconvert), the GIL is released around the library's loops.
// A refused row gets sharp-normalise's message (normalisers/input_rows.hpp): the kernels detect it
// cheaply; only then the rows are checked in order to name the first bad one as the CLI would.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "core/errors.hpp"
#include "normalisers/input_rows.hpp"
#include "normalisers/normaliser.hpp"
#include "normalisers/temperature.hpp"

namespace py = pybind11;

namespace sharp::python {
namespace {

using norm::Normaliser;

// A C-contiguous array of T; with noconvert, pybind11 passes only such arrays, as they are.
template <class T>
using CArray = py::array_t<T, py::array::c_style>;

// Built normalisers by spec text, the most recently used first (a training loop that changes beta
// every step makes a new spec each time, so the cache is bounded). Used with the GIL held.
std::shared_ptr<const Normaliser> normaliser_for(const std::string& spec) {
  constexpr std::size_t kCapacity = 64;
  static std::list<std::pair<std::string, std::shared_ptr<const Normaliser>>> recent;
  for (auto it = recent.begin(); it != recent.end(); ++it) {
    if (it->first != spec) continue;
    recent.splice(recent.begin(), recent, it);
    return it->second;
  }
  std::shared_ptr<const Normaliser> made = norm::make_normaliser(spec);   // BadInput on a bad spec
  recent.emplace_front(spec, made);
  if (recent.size() > kCapacity) recent.pop_back();
  return made;
}

// Releases the GIL for work worth it (a release and reacquisition cost about a microsecond, the
// time of a whole call on a few short rows).
class ReleaseGilFor {
 public:
  explicit ReleaseGilFor(std::size_t logits) {
    if (logits >= 4096) released_.emplace();
  }

 private:
  std::optional<py::gil_scoped_release> released_;
};

// rows x n of an array whose last axis holds the rows. A zero-length axis is refused as the CLI
// refuses an empty line (line 1: the first row).
template <class T>
std::pair<std::size_t, std::size_t> rows_and_length(const CArray<T>& z) {
  if (z.ndim() == 0) throw BadInput("a 0-dimensional array has no axis to normalise (give at least one row of logits)");
  const std::size_t n = static_cast<std::size_t>(z.shape(z.ndim() - 1));
  if (n == 0) norm::check_input_row<T>(nullptr, 0, 1);
  return {static_cast<std::size_t>(z.size()) / n, n};
}

// Runs `kernel`; a NumericError it throws becomes the CLI's BadInput for the first refused row when
// the rows hold one (NaN, +inf, every entry masked), else stays as it is.
template <class T, class Kernel>
void with_cli_errors(const T* z, std::size_t rows, std::size_t n, Kernel&& kernel) {
  try {
    kernel();
  } catch (const NumericError&) {
    for (std::size_t r = 0; r < rows; ++r) norm::check_input_row(z + r * n, n, r + 1);
    throw;
  }
}

template <class T>
CArray<T> forward(const CArray<T>& z, const std::string& spec) {
  const auto nz = normaliser_for(spec);
  const auto [rows, n] = rows_and_length(z);
  CArray<T> p(std::vector<py::ssize_t>(z.shape(), z.shape() + z.ndim()));
  const T* zp = z.data();
  T* pp = p.mutable_data();
  {
    ReleaseGilFor released(rows * n);
    with_cli_errors(zp, rows, n, [&] { nz->forward(zp, pp, rows, n); });
  }
  return p;
}

// Returns dL/dz (the dtype of z) and dL/dθ per row, [rows, P] float64 (P = parameter_names()).
template <class T>
std::pair<CArray<T>, CArray<double>> backward(const CArray<T>& z, const CArray<T>& p,
                                                        const CArray<T>& v, const std::string& spec) {
  const auto nz = normaliser_for(spec);
  const auto [rows, n] = rows_and_length(z);
  for (const CArray<T>* a : {&p, &v}) {
    if (a->ndim() != z.ndim() || !std::equal(z.shape(), z.shape() + z.ndim(), a->shape()))
      throw BadInput("normalise_backward: x, p and grad must have the same shape");
  }
  const std::size_t np = nz->parameter_names().size();
  CArray<T> grad_z(std::vector<py::ssize_t>(z.shape(), z.shape() + z.ndim()));
  CArray<double> grad_params(std::vector<py::ssize_t>{static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(np)});
  const T *zp = z.data(), *pp = p.data(), *vp = v.data();
  T* gz = grad_z.mutable_data();
  double* gp = grad_params.mutable_data();
  {
    ReleaseGilFor released(rows * n);
    with_cli_errors(zp, rows, n, [&] { nz->backward(zp, pp, vp, gz, np ? gp : nullptr, rows, n); });
  }
  return {grad_z, grad_params};
}

// One double per row: fn(row pointer, n) over the rows of the last axis.
template <class T, class Fn>
CArray<double> per_row(const CArray<T>& z, Fn&& fn) {
  const auto [rows, n] = rows_and_length(z);
  CArray<double> out(std::vector<py::ssize_t>(z.shape(), z.shape() + z.ndim() - 1));
  const T* zp = z.data();
  double* op = out.mutable_data();
  {
    ReleaseGilFor released(rows * n);
    for (std::size_t r = 0; r < rows; ++r) op[r] = fn(zp + r * n, n);
  }
  return out;
}

template <class T>
void check_rows(const CArray<T>& z) {
  const auto [rows, n] = rows_and_length(z);
  const T* zp = z.data();
  py::gil_scoped_release released;
  for (std::size_t r = 0; r < rows; ++r) norm::check_input_row(zp + r * n, n, r + 1);
}

template <class T>
void bind_typed(py::module_& m) {
  const auto arr = [](const char* name) { return py::arg(name).noconvert(); };
  m.def("forward", &forward<T>, arr("z"), py::arg("spec"));
  m.def("backward", &backward<T>, arr("z"), arr("p"), arr("v"), py::arg("spec"));
  m.def("row_entropy", [](const CArray<T>& p) {
    return per_row(p, [](const T* row, std::size_t n) { return norm::entropy(row, n); });
  }, arr("p"));
  m.def("row_beta", [](const CArray<T>& z, const std::string& spec) {
    const auto nz = normaliser_for(spec);
    const norm::Temperature* temperature = nz->temperature();
    if (temperature == nullptr)
      throw BadInput("normaliser '" + nz->name() + "' has no temperature: row_beta answers for the softmax "
                     "family (p = softmax(beta z)), docs/science.md#temperature");
    return per_row(z, [&](const T* row, std::size_t n) { return norm::row_beta(*temperature, row, n); });
  }, arr("z"), py::arg("spec"));
  m.def("check_rows", &check_rows<T>, arr("z"));
}

}  // namespace

void bind_normalisers(py::module_& m) {
  // float first: with noconvert each overload takes only its own dtype.
  bind_typed<float>(m);
  bind_typed<double>(m);
  m.def("normaliser_names", [] { return norm::normaliser_names(); },
        "every normaliser name, in the order of docs/science.md#remedies");
  m.def("parse_spec", [](const std::string& text) {
    const norm::Spec spec = norm::parse_spec(text);
    return std::make_pair(spec.name, spec.params);
  }, py::arg("spec"), "(name, {parameter: value}) of a spec, defaults filled in (BadInput if bad)");
  m.def("format_spec", [](const std::string& name, const std::map<std::string, double>& params) {
    return norm::format_spec(norm::Spec{name, params});
  }, py::arg("name"), py::arg("params"), "the canonical text of a spec");
  m.def("parameter_names", [](const std::string& spec) { return normaliser_for(spec)->parameter_names(); },
        py::arg("spec"), "the parameters normalise_backward differentiates, in its order");
}

}  // namespace sharp::python

// The closed forms of the dispersion lemma (docs/science.md#dispersion-lemma) as sharp.dispersion.*,
// broadcasting over NumPy arrays like ufuncs. A count n below 1 reaches the library as 0, which
// refuses it with its own message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>

#include "bindings.hpp"
#include "dispersion/dispersion_bounds.hpp"

namespace py = pybind11;

namespace sharp::python {
namespace {

std::uint64_t count(std::int64_t n) { return static_cast<std::uint64_t>(std::max<std::int64_t>(n, 0)); }

}  // namespace

void bind_dispersion(py::module_ m) {
  using namespace sharp::dispersion;
  m.def("bound_upper", py::vectorize([](std::int64_t n, double spread, double theta) {
    return bound_upper(count(n), spread, theta);
  }), py::arg("n"), py::arg("spread"), py::arg("theta"), "exp(delta/theta)/n: no coefficient is larger");
  m.def("bound_lower", py::vectorize([](std::int64_t n, double spread, double theta) {
    return bound_lower(count(n), spread, theta);
  }), py::arg("n"), py::arg("spread"), py::arg("theta"), "exp(-delta/theta)/n: no coefficient is smaller");
  m.def("worst_case_alpha_max", py::vectorize([](std::int64_t n, double spread, double theta) {
    return worst_case_alpha_max(count(n), spread, theta);
  }), py::arg("n"), py::arg("spread"), py::arg("theta"),
        "1/(1 + (n-1) exp(-delta/theta)): the largest coefficient of the tight worst case");
  m.def("smallest_n_below", py::vectorize(&smallest_n_below), py::arg("epsilon"), py::arg("spread"),
        py::arg("theta"), "1 + (1/epsilon - 1) exp(delta/theta): alpha_max < epsilon beyond it");
  m.def("smallest_integer_n_below", py::vectorize(&smallest_integer_n_below), py::arg("epsilon"),
        py::arg("spread"), py::arg("theta"), "the smallest integer n with worst_case_alpha_max(n) < epsilon");
}

}  // namespace sharp::python

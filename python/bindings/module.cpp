// The compiled part of the Python module `sharp` (python/sharp/__init__.py wraps it): pybind11
// bindings over the library's public interfaces, kept thin so that each function is the library's
// own. Errors: sharp::BadInput -> sharp.BadInput (a ValueError), sharp::NumericError ->
// sharp.NumericError (an ArithmeticError), with the library's messages.
#include <omp.h>
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "core/errors.hpp"
#include "core/simd_isa.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_sharp, m) {
  m.doc() = "sharp's kernels (use the package `sharp`, which wraps this module)";
  py::register_exception<sharp::BadInput>(m, "BadInput", PyExc_ValueError);
  py::register_exception<sharp::NumericError>(m, "NumericError", PyExc_ArithmeticError);

  // OpenMP's thread count for the calling thread's later calls (every loop of the library asks
  // omp_get_max_threads()); results do not depend on it.
  m.def("set_num_threads", [](int threads) {
    if (threads < 1) throw sharp::BadInput("threads must be >= 1 (got " + std::to_string(threads) + ")");
    omp_set_num_threads(threads);
  }, py::arg("threads"));
  m.def("get_num_threads", [] { return omp_get_max_threads(); });
  m.def("simd_isa", [] { return sharp::simd_isa_name(sharp::active_simd_isa()); },
        "the ISA the hot kernels dispatch to (avx2 or avx512; SHARP_SIMD forces one)");

  sharp::python::bind_normalisers(m);
  sharp::python::bind_streaming(m);
  sharp::python::bind_dispersion(m.def_submodule("dispersion", "closed forms of the dispersion lemma"));
}

// The streaming softmax statistics (docs/science.md#streaming-entropy): sharp.SoftmaxStream over
// chunks of a row too long to hold, and sharp.softmax_summary of a row in memory. Arrays are read in
// place (C-contiguous float32 or float64, all entries as one row); the GIL is released while adding.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "bindings.hpp"
#include "normalisers/softmax_summary.hpp"
#include "normalisers/softmax_stream.hpp"

namespace py = pybind11;

namespace sharp::python {
namespace {

template <class T>
using CArray = py::array_t<T, py::array::c_style>;

template <class T>
void bind_typed(py::class_<norm::SoftmaxStream>& stream, py::module_& m) {
  stream.def("add", [](norm::SoftmaxStream& s, const CArray<T>& z) {
    py::gil_scoped_release released;
    s.add(z.data(), static_cast<std::size_t>(z.size()));
  }, py::arg("z").noconvert(), "adds a chunk of logits (the entries that follow those already added)");
  m.def("softmax_summary", [](const CArray<T>& z, bool parallel) {
    py::gil_scoped_release released;
    return norm::softmax_summary(z.data(), static_cast<std::size_t>(z.size()), parallel);
  }, py::arg("z").noconvert(), py::arg("parallel") = false);
}

}  // namespace

void bind_streaming(py::module_& m) {
  py::class_<norm::SoftmaxSummary>(m, "SoftmaxSummary", "one-pass softmax statistics of a row")
      .def_readonly("max", &norm::SoftmaxSummary::max, "the largest logit m")
      .def_readonly("log_sum_exp", &norm::SoftmaxSummary::log_sum_exp, "ln sum_k exp(z_k)")
      .def_readonly("entropy", &norm::SoftmaxSummary::entropy, "H(softmax(z)) in nats")
      .def_readonly("adaptive_beta", &norm::SoftmaxSummary::adaptive_beta, "beta(H) of docs/science.md#adaptive-temperature")
      .def_readonly("count", &norm::SoftmaxSummary::count, "logits seen (masked included)")
      .def("__repr__", [](const norm::SoftmaxSummary& s) {
        return "SoftmaxSummary(max=" + py::repr(py::float_(s.max)).cast<std::string>() +
               ", log_sum_exp=" + py::repr(py::float_(s.log_sum_exp)).cast<std::string>() +
               ", entropy=" + py::repr(py::float_(s.entropy)).cast<std::string>() +
               ", adaptive_beta=" + py::repr(py::float_(s.adaptive_beta)).cast<std::string>() +
               ", count=" + std::to_string(s.count) + ")";
      });
  py::class_<norm::SoftmaxStream> stream(m, "SoftmaxStream",
      "running max m, s = sum exp(z - m) and t = sum (z - m) exp(z - m) of a row fed in chunks");
  stream.def(py::init<>())
      .def("merge", &norm::SoftmaxStream::merge, py::arg("later"),
           "adds the statistics of the logits that come after this stream's")
      .def_property_readonly("max", &norm::SoftmaxStream::max)
      .def_readonly("min", &norm::SoftmaxStream::min, "the smallest logit seen")
      .def_readonly("count", &norm::SoftmaxStream::count, "logits seen, masked ones included")
      .def("log_sum_exp", &norm::SoftmaxStream::log_sum_exp)
      .def("entropy", &norm::SoftmaxStream::entropy)
      .def("probability", py::vectorize(&norm::SoftmaxStream::probability), py::arg("z"),
           "softmax coefficient exp(z - m)/s of logits z of this row")
      .def("summary", [](const norm::SoftmaxStream& s) { return norm::summarize(s); });
  bind_typed<float>(stream, m);
  bind_typed<double>(stream, m);
}

}  // namespace sharp::python

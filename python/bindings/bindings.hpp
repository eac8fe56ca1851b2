#pragma once
// One function per bound part of the library (python/bindings/<part>.cpp), called by module.cpp.
#include <pybind11/pybind11.h>

namespace sharp::python {

void bind_normalisers(pybind11::module_& m);   // normalisers.cpp: forward, backward, specs, row entropies and betas
void bind_streaming(pybind11::module_& m);     // streaming.cpp: SoftmaxStream, softmax_summary
void bind_dispersion(pybind11::module_ m);     // dispersion.cpp: the lemma's bounds

}  // namespace sharp::python

"""sharp from Python: the suite's normalisers and statistics on NumPy arrays, and its result files
as xarray datasets (docs/architecture.md#python-module).

    import sharp                                        # PYTHONPATH=build/python (README)
    p = sharp.normalise(logits, "adaptive", axis=-1)    # the C++ kernels, on the array in place
    g = sharp.normalise_backward(logits, p, grad_p, "adaptive")
    ds = sharp.open_results("results/bounds.h5")        # an xarray.Dataset
    ds["alpha_max"].sel(logits="uniform").plot()

sharp.kernels holds the array functions (sharp.normalise, ...), sharp.results the result-file
reader (sharp.open_results), sharp.torch the autograd functions (import it explicitly; it needs
PyTorch). The reader is pure Python: it works from the source tree (python/) without a build,
where the array functions say that the compiled module is missing.
"""
from .results import ResultFileError, open_results, point_arrays, read_points

try:
    from .kernels import (BadInput, NumericError, SoftmaxStream, SoftmaxSummary,
                          check_rows, dispersion, entropy, format_spec, get_num_threads,
                          normalise, normalise_backward, normaliser_names, parameter_names,
                          parse_spec, row_beta, set_num_threads, simd_isa, softmax_summary)
except ImportError as _error:   # the source tree, or a build for another Python
    _missing = _error

    def __getattr__(name):
        raise ImportError(f"sharp.{name} needs sharp's compiled module, which cannot be imported "
                          f"({_missing}): run `make` and put build/python on PYTHONPATH (README)")

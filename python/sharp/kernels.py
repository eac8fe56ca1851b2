"""sharp's kernels on NumPy arrays: the normaliser family (docs/science.md#remedies), forward and
backward, the streaming softmax statistics (docs/science.md#streaming-entropy) and the closed forms
of the dispersion lemma (docs/science.md#dispersion-lemma), all running the C++ library's own code
(the compiled module sharp._sharp).

Arrays: a C-contiguous float32 or float64 array is used as it is, without a copy, and the result
has its dtype. Any other array (another dtype, non-contiguous, or a list) is copied once into a
C-contiguous array first: float32 stays float32, every other dtype becomes float64. An `axis`
other than the last is moved to the end in that same copy, and the result is returned with the
axis back in place (a view). The GIL is released while the library's loops run, which use
get_num_threads() OpenMP threads (set_num_threads(n) changes it; results do not depend on it).

Errors: a wrong spec string, a NaN or +inf logit, a fully masked row or a zero-length axis raise
BadInput (a ValueError) with the message sharp-normalise gives for the same values written one row
per line: row r of the array's [rows, n] view is "line r + 1", entry c "column c + 1".
sharp-normalise also refuses a row whose logits span more than the largest double (only float64
rows can); normalise() leaves that check to check_rows(), which makes every check of the CLI.
"""
from __future__ import annotations

import numpy as np

from . import _sharp

BadInput = _sharp.BadInput
NumericError = _sharp.NumericError
SoftmaxStream = _sharp.SoftmaxStream
SoftmaxSummary = _sharp.SoftmaxSummary
dispersion = _sharp.dispersion
set_num_threads = _sharp.set_num_threads
get_num_threads = _sharp.get_num_threads
simd_isa = _sharp.simd_isa
normaliser_names = _sharp.normaliser_names
parse_spec = _sharp.parse_spec
format_spec = _sharp.format_spec
parameter_names = _sharp.parameter_names

_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _rows(x, axis: int, dtype=None) -> tuple:
    """(x as a C-contiguous float32/float64 array whose last axis is `axis`, that axis's index in x).
    No copy when x already is such an array with axis last; otherwise exactly one."""
    if (type(x) is np.ndarray and x.dtype in _KERNEL_DTYPES and (dtype is None or x.dtype == dtype)
            and x.flags.c_contiguous and x.ndim and axis in (-1, x.ndim - 1)):
        return x, axis   # the common case, first: a call on a few short rows takes microseconds
    a = np.asarray(x)
    if dtype is None:
        dtype = a.dtype if a.dtype in _KERNEL_DTYPES else np.dtype(np.float64)
    if a.ndim == 0:
        return np.ascontiguousarray(a, dtype=dtype), -1   # _sharp refuses it, in its words
    axis = np.core.multiarray.normalize_axis_index(axis, a.ndim)
    if axis != a.ndim - 1:
        a = np.moveaxis(a, axis, -1)
    return np.ascontiguousarray(a, dtype=dtype), axis


def _axis_back(a: np.ndarray, axis: int) -> np.ndarray:
    return a if axis in (-1, a.ndim - 1) else np.moveaxis(a, -1, axis)


def normalise(x, spec: str, axis: int = -1) -> np.ndarray:
    """Probabilities of the normaliser `spec` (e.g. "softmax", "softmax:beta=2", "adaptive",
    "entmax:alpha=1.5"; sharp-normalise --help lists them) along `axis`; -inf marks a masked
    entry. float64 results are bit-identical to sharp-normalise's."""
    z, axis = _rows(x, axis)
    return _axis_back(_sharp.forward(z, spec), axis)


def normalise_backward(x, p, grad, spec: str, axis: int = -1, parameters: bool = False):
    """The vector-Jacobian product of normalise: dL/dx for grad = dL/dp, with p = normalise(x, spec,
    axis) (computed in double for float32 rows). With parameters=True, returns (dL/dx, {name:
    dL/dname per row}) for the spec's continuous parameters (parameter_names(spec)), each of shape
    x.shape without `axis`."""
    z, moved = _rows(x, axis)
    pz, _ = _rows(p, axis, z.dtype)
    vz, _ = _rows(grad, axis, z.dtype)
    grad_z, grad_params = _sharp.backward(z, pz, vz, spec)
    grad_x = _axis_back(grad_z, moved)
    if not parameters:
        return grad_x
    names = _sharp.parameter_names(spec)
    return grad_x, {name: grad_params[:, i].reshape(z.shape[:-1]) for i, name in enumerate(names)}


def entropy(p, axis: int = -1) -> np.ndarray:
    """Entropy in nats of each row of probabilities (0 ln 0 = 0), shape p.shape without `axis`:
    sharp-normalise --entropy's first column."""
    return _sharp.row_entropy(_rows(p, axis)[0])


def row_beta(x, spec: str, axis: int = -1) -> np.ndarray:
    """The inverse temperature beta a softmax-family normaliser (docs/science.md#temperature) uses
    for each row of logits, shape x.shape without `axis`: beta for softmax, s ln(keys) for ssmax, the
    entropy-driven beta of docs/science.md#adaptive-temperature for adaptive (sharp-normalise
    --normaliser adaptive --entropy's second column). BadInput for a normaliser without one."""
    return _sharp.row_beta(_rows(x, axis)[0], spec)


def check_rows(x, axis: int = -1) -> None:
    """Every check sharp-normalise makes on its input rows (NaN, +inf, empty or fully masked rows,
    logits spanning more than the largest double), raising BadInput with its message."""
    _sharp.check_rows(_rows(x, axis)[0])


def softmax_summary(x, parallel: bool = False) -> SoftmaxSummary:
    """max, log-sum-exp, entropy, adaptive beta and count of all of x's entries as one row, in one
    pass (parallel=True splits the row across threads, same bits)."""
    return _sharp.softmax_summary(_rows(np.ravel(x), -1)[0], parallel)

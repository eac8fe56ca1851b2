"""Compare the data of two result files: /points, /arrays and /config (docs/architecture.md#determinism: timing and
provenance are not data). Used by the end-to-end tests; also runs standalone:
    /usr/bin/python3 tests/e2e/h5compare.py A.h5 B.h5
"""
import sys

import h5py
import numpy as np


def _collect(f):
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            out[name] = obj[()]

    for top in ("points", "arrays"):
        if top in f:
            f[top].visititems(lambda n, o, t=top: visit(f"{t}/{n}", o))
    out["config"] = f["config"][()]
    return out


def data_differences(path_a, path_b):
    """A list of human-readable differences (empty when the data are identical bit for bit)."""
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        a, b = _collect(fa), _collect(fb)
    diffs = [f"only in {path_a}: {k}" for k in sorted(set(a) - set(b))]
    diffs += [f"only in {path_b}: {k}" for k in sorted(set(b) - set(a))]
    for k in sorted(set(a) & set(b)):
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.dtype != y.dtype or x.shape != y.shape:
            diffs.append(f"{k}: dtype/shape {x.dtype}{x.shape} vs {y.dtype}{y.shape}")
        elif x.dtype.kind == "f":
            if not np.array_equal(x.view(np.uint64 if x.itemsize == 8 else np.uint32),
                                  y.view(np.uint64 if y.itemsize == 8 else np.uint32)):
                diffs.append(f"{k}: values differ (max abs {np.max(np.abs(x - y))})")
        elif not np.array_equal(x, y):
            diffs.append(f"{k}: values differ")
    return diffs


if __name__ == "__main__":
    d = data_differences(sys.argv[1], sys.argv[2])
    print("\n".join(d) if d else "identical data")
    sys.exit(1 if d else 0)

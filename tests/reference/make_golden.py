#!/usr/bin/python3
"""Writes the golden file of the normaliser family from the numpy reference (normalisers.py):
forward outputs and vector-Jacobian products for every spec on a fixed set of cases drawn from a
fixed seed. ctest runs it first (fixture golden_normalisers); the C++ golden tests and the
sharp-normalise end-to-end test compare against it (docs/science.md#reference-implementation).

    /usr/bin/python3 tests/reference/make_golden.py --out build/golden/normalisers.h5

Why generated, not committed: the file is a function of this script, the reference and the seed, so
a change to any of them regenerates it and the diff to review is the code; a committed binary would
go stale silently and bloat the history with every change. Generation takes a few seconds.

Layout (all float64):
  /                        attrs description, seed, generator
  /cases/<case>            attr about; logits [rows, n] (-inf = masked), v [rows, n] (the fixed
                           vector of the vector-Jacobian product), entropy [rows] (nats, softmax at
                           beta = 1), adaptive_beta [rows]
  /cases/<case>/<NN>       attr spec (the text the C++ parses), p [rows, n], grad_z [rows, n] = J^T v,
                           grad_params [rows, P] (P = the spec's differentiated parameters, in the
                           C++ order; absent when P = 0), grad_z_scale and grad_params_scale (float32:
                           the magnitude of the terms each gradient entry is a sum of; an entry far
                           below its scale is a cancellation, known to a few ulp of the scale only)
The two rows of 2^20 entries repeat a 4093-entry pattern (prime, so the C++ kernel's 2048-entry
blocks each see another part of it) or are 99.8% masked, so that gzip keeps the file at a few MB.
"""
import argparse
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import normalisers as R  # noqa: E402

SEED = 20240613
EVERY_NORMALISER = [
    "softmax", "softmax:beta=0.25", "softmax:beta=4", "softmax:theta=2", "adaptive", "ssmax:s=1",
    "ssmax:s=0.43", "topk:k=1", "topk:k=3", "argmax", "sparsemax", "entmax15", "entmax:alpha=1.25",
    "entmax:alpha=1.5", "entmax:alpha=1.7", "entmax:alpha=2", "asentmax:b=0.5:gamma=1",
    "asentmax:b=1:gamma=0.5:delta=0.5", "asentmax:b=0:gamma=1:delta=2",
    "asentmax_query:b=1.3:gamma=-0.4", "stieltjes:q=1",
    "stieltjes:q=2.5", "stieltjes:q=4", "stieltjes:q=16",
]
NO_STIELTJES = [s for s in EVERY_NORMALISER if not s.startswith("stieltjes")]
SOFTMAX_FAMILY = [s for s in EVERY_NORMALISER if s.split(":")[0] in ("softmax", "adaptive", "ssmax", "topk", "argmax")]
BIG_ROW_NORMALISERS = ["softmax", "softmax:beta=4", "adaptive", "ssmax:s=1", "topk:k=3", "argmax", "sparsemax",
             "entmax15", "entmax:alpha=1.25", "asentmax:b=0.5:gamma=1", "stieltjes:q=4"]
PERIOD = 4093
BIG_N = 1 << 20


def cases(rng):
    """(name, about, logits [rows, n], specs) in a fixed order."""
    out = []
    for sigma in (1.0, 10.0):
        for n in (1, 2, 3, 5, 16, 64, 65, 100, 1000):
            rows = 4 if n < 1000 else 2
            out.append((f"normal{sigma:g}_n{n}", f"N(0, {sigma:g}^2) logits", rng.normal(0, sigma, (rows, n)), EVERY_NORMALISER))
    out.append(("normal1_n2100", "N(0, 1), longer than one 2048-entry block", rng.normal(0, 1, (1, 2100)), EVERY_NORMALISER))
    for n in (16, 300):
        out.append((f"uniform8_n{n}", "U(-8, 8) logits", rng.uniform(-8, 8, (2, n)), EVERY_NORMALISER))

    z = rng.normal(0, 3, (6, 50))
    z[rng.random(z.shape) < 0.3] = -np.inf
    z[4, 0], z[4, 1:] = 1.25, -np.inf   # one unmasked entry
    z[5, :] = -np.inf
    z[5, [7, 31]] = [0.25, -1.5]  # two unmasked entries
    out.append(("masked_n50", "30% masked (-inf); a row with one and a row with two unmasked entries", z, EVERY_NORMALISER))
    z = np.full((2, 70), -np.inf)
    z[0, 3::4] = rng.normal(0, 2, len(range(3, 70, 4)))
    z[1, 64:] = rng.normal(0, 2, 6)   # the unmasked entries all past the first 64
    out.append(("masked_n70", "masked runs longer than a SIMD batch", z, EVERY_NORMALISER))

    out.append(("ties_all_equal", "every entry equal", np.array([[0.0] * 9, [-5.5] * 9]), EVERY_NORMALISER))
    out.append(("ties", "ties at the max, at the top-3 boundary and at the sparse supports' edge",
                np.array([[2.0, 1.0, 2.0, 0.0, -1.0, 0.5, 1.0, 2.0 - 1e-12, 1.0, 0.0, -3.0, 1.0],
                          [1.0, 3.0, 2.0, 2.0, 2.0, 0.0, 3.0, -1.0, 2.0, 1.0, 1.0, -2.0],
                          [0.0, -1.0, -1.0, -1.0, -2.0, -2.0, -1.0, -3.0, 0.0, -0.5, -0.5, -0.5]]), EVERY_NORMALISER))
    out.append(("n1", "one entry per row", np.array([[-3.0], [0.0], [7.5], [1e5], [-1e5]]), EVERY_NORMALISER))
    out.append(("n1_extreme", "one entry of magnitude 1e300", np.array([[1e300], [-1e300]]), NO_STIELTJES))

    z = np.array([[1e300, -1e300, 0.0, 1e300, -1e300, 5.0, 1e300 * (1 - 2**-50), -np.inf, 1e299, -1e299],
                  [-1e300, -1e300 * (1 + 2**-51), -1e300 + 0.0, -1e299, -1e300, -1e300, -1e300, -1e300, -1e300, -1e300],
                  [1.0, 2.0, -1e300, 3.0, 0.5, -1e300, 2.5, 1e-300, -1e300, 2.75]])
    out.append(("extreme_1e300", "logits up to 1e300 in magnitude (the softmax family's range)", z, NO_STIELTJES))
    z = np.concatenate([rng.normal(0, 1e4, (2, 20)), np.array([[1e5, -1e5, 0, 1e5 - 1, 99999.5, -99999] + [-1e5] * 14])])
    out.append(("extreme_1e5", "logits up to 1e5 in magnitude (Stieltjes' range)", z, EVERY_NORMALISER))
    out.append(("shifted_1e6", "N(0, 1) + 1e6", 1e6 + rng.normal(0, 1, (3, 50)), EVERY_NORMALISER))
    out.append(("shifted_1e14", "N(0, 4) + 1e14 (ulp 1/64): large shifts over 4097 entries",
                1e14 + rng.normal(0, 4, (1, 4097)), SOFTMAX_FAMILY))
    out.append(("shifted_minus_1e30", "N(0, 1e15) - 1e30 over 2100 entries", -1e30 + rng.normal(0, 1e15, (1, 2100)),
                SOFTMAX_FAMILY))

    # Two 2048-entry blocks whose maxima are 1e300 apart, the first with terms up to e^500 above its
    # first entries (the C++ kernel's per-block reference point): merging must not overflow.
    far = np.concatenate([np.zeros(16), np.full(2032, 500.0), 1e300 + np.zeros(8), np.full(2040, -np.inf)])
    near = np.concatenate([np.full(2048, 1e300), np.zeros(16), np.full(2032, 500.0)])
    out.append(("far_blocks", "blocks with maxima 1e300 apart", np.stack([far, near]), SOFTMAX_FAMILY))

    pattern = rng.normal(0, 2, PERIOD)
    out.append(("big_periodic", f"one row of 2^20 entries repeating a {PERIOD}-entry N(0, 4) pattern",
                np.resize(pattern, BIG_N)[None, :], BIG_ROW_NORMALISERS))
    z = np.full(BIG_N, -np.inf)
    keep = rng.random(BIG_N) < 0.002
    z[keep] = rng.normal(0, 2, keep.sum())
    out.append(("big_masked", "one row of 2^20 entries, 99.8% masked", z[None, :], BIG_ROW_NORMALISERS))
    return out


def write(group, name, data, dtype=np.float64):
    data = np.ascontiguousarray(data, dtype=dtype)
    if data.nbytes > (1 << 12):
        chunks = (1, data.shape[1]) if data.ndim == 2 else None
        group.create_dataset(name, data=data, chunks=chunks, compression="gzip", compression_opts=6, shuffle=True)
    else:
        group.create_dataset(name, data=data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rng = np.random.default_rng(SEED)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".tmp"
    with h5py.File(tmp, "w", libver=("v108", "v110")) as f:   # compact groups; HDF5 1.10 reads it
        f.attrs["description"] = (
            "Reference outputs of the attention normalisers from tests/reference/normalisers.py "
            "(float64 numpy from the formulas). /cases/<case>: logits [rows, n] (-inf = masked), "
            "v [rows, n], entropy and adaptive_beta [rows]; /cases/<case>/<NN>: attribute spec, "
            "p = forward(logits), grad_z = J^T v, grad_params [rows, P] (when P > 0).")
        f.attrs["seed"] = SEED
        f.attrs["generator"] = "tests/reference/make_golden.py"
        for name, about, z, specs in cases(rng):
            g = f.create_group(f"cases/{name}")
            g.attrs["about"] = about
            if name == "big_periodic" or name == "big_masked":
                v = np.resize(rng.normal(0, 1, PERIOD), z.shape)   # periodic too: compresses
            else:
                v = rng.normal(0, 1, z.shape)
            write(g, "logits", z)
            write(g, "v", v)
            h = R.softmax_entropy(z)
            write(g, "entropy", h)
            write(g, "adaptive_beta", R.adaptive_beta(h))
            for k, spec in enumerate(specs):
                s = g.create_group(f"{k:02d}")
                s.attrs["spec"] = spec
                p, grad_z, grad_params, z_scale, params_scale = R.forward_and_backward(spec, z, v)
                write(s, "p", p)
                write(s, "grad_z", grad_z)
                write(s, "grad_z_scale", z_scale, np.float32)
                if grad_params.shape[1] > 0:
                    write(s, "grad_params", grad_params)
                    write(s, "grad_params_scale", params_scale, np.float32)
    os.replace(tmp, args.out)
    print(f"wrote {args.out} ({os.path.getsize(args.out) / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()

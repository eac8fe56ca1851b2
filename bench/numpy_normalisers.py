#!/usr/bin/python3
"""numpy reference of the normaliser family (docs/science.md#remedies), timed on the same shapes and data law as
build/bin/sharp-bench-normalisers (logits ~ N(0, 4^2)), for the speed-up column of `make bench`.

Straightforward vectorised numpy (rows at once, one thread: numpy's elementwise kernels do not
thread), the way an experimenter would write them: softmax via max/exp/sum, adaptive temperature
with the exact entropy, top-k by argpartition, sparsemax and 1.5-entmax sort-based, alpha-entmax and
Stieltjes by bisection (50 / 60 iterations, as the entmax package's bisection default). Prints one
line per case, or writes JSON with --json FILE.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/numpy_normalisers.py [--json out.json] [--quick]

scripts/bench_normalisers.sh runs it with glibc's MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_
raised, so temporaries reuse memory (numpy's best case; without it page faults dominate and vary).
"""
import argparse
import json
import time

import numpy as np


def softmax(z, beta=1.0):
    beta = np.asarray(beta, dtype=z.dtype)
    if beta.ndim == 1:
        beta = beta[:, None]
    e = np.exp(beta * (z - z.max(axis=1, keepdims=True)))
    return e / e.sum(axis=1, keepdims=True)


def entropy(p):
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)


def adaptive(z):
    h = entropy(softmax(z))
    poly = (((-0.037 * h + 0.481) * h - 2.3) * h + 4.917) * h - 1.791
    beta = np.where(h > 0.5, np.maximum(poly, 1.0), 1.0)
    return softmax(z, beta)


def ssmax(z, s=1.0):
    return softmax(z, s * np.log(z.shape[1]))


def topk(z, k):
    if k >= z.shape[1]:
        return softmax(z)
    idx = np.argpartition(-z, k - 1, axis=1)[:, :k]
    masked = np.full_like(z, -np.inf)
    np.put_along_axis(masked, idx, np.take_along_axis(z, idx, axis=1), axis=1)
    return softmax(masked)


def argmax(z):
    p = np.zeros_like(z)
    np.put_along_axis(p, z.argmax(axis=1)[:, None], 1.0, axis=1)
    return p


def sparsemax(z):
    u = -np.sort(-z, axis=1)
    k = np.arange(1, z.shape[1] + 1, dtype=z.dtype)
    cs = np.cumsum(u, axis=1) - 1
    support = (u - cs / k) > 0
    kz = support.sum(axis=1, keepdims=True)
    tau = np.take_along_axis(cs, kz - 1, axis=1) / kz
    return np.maximum(z - tau, 0)


def entmax15(z):
    z = z / 2
    z = z - z.max(axis=1, keepdims=True)
    u = -np.sort(-z, axis=1)
    k = np.arange(1, z.shape[1] + 1, dtype=z.dtype)
    mean = np.cumsum(u, axis=1) / k
    mean_sq = np.cumsum(u * u, axis=1) / k
    ss = k * (mean_sq - mean * mean)
    delta = np.maximum((1 - ss) / k, 0)
    tau = mean - np.sqrt(delta)
    kz = (tau <= u).sum(axis=1, keepdims=True)
    tau_star = np.take_along_axis(tau, kz - 1, axis=1)
    return np.maximum(z - tau_star, 0) ** 2


def entmax_bisect(z, alpha, iterations=50):
    w = (alpha - 1) * (z - z.max(axis=1, keepdims=True))
    r = 1.0 / (alpha - 1)
    lo = np.full((z.shape[0], 1), -1.0, dtype=z.dtype)
    hi = np.full_like(lo, -(z.shape[1] ** (1 - alpha)))
    for _ in range(iterations):
        mid = (lo + hi) / 2
        f = (np.maximum(w - mid, 0) ** r).sum(axis=1, keepdims=True) - 1
        lo = np.where(f >= 0, mid, lo)
        hi = np.where(f >= 0, hi, mid)
    p = np.maximum(w - lo, 0) ** r
    return p / p.sum(axis=1, keepdims=True)


def asentmax(z, b=0.5, gamma=1.0, delta=1.0):
    return entmax15((delta + b * np.log(z.shape[1]) ** gamma) * z)


def stieltjes(z, q, iterations=60):
    g = z.max(axis=1, keepdims=True) - z
    lo = np.ones((z.shape[0], 1), dtype=z.dtype)
    hi = np.full_like(lo, z.shape[1] ** (1 / q))
    for _ in range(iterations):
        mid = (lo + hi) / 2
        f = ((mid + g) ** -q).sum(axis=1, keepdims=True) - 1
        lo = np.where(f >= 0, mid, lo)
        hi = np.where(f >= 0, hi, mid)
    p = (lo + g) ** -q
    return p / p.sum(axis=1, keepdims=True)


NORMALISERS = {
    "softmax": softmax,
    "adaptive": adaptive,
    "ssmax:s=1": ssmax,
    "topk:k=8": lambda z: topk(z, 8),
    "argmax": argmax,
    "sparsemax": sparsemax,
    "entmax15": entmax15,
    "entmax:alpha=1.25": lambda z: entmax_bisect(z, 1.25),
    "asentmax:b=0.5:gamma=1": asentmax,
    "stieltjes:q=4": lambda z: stieltjes(z, 4.0),
}
SHAPES = [(1, 1 << 24), (1024, 1024), (16384, 16)]
ITERATIVE = {"entmax:alpha=1.25", "stieltjes:q=4"}


def best_time(fn, z, repeats):
    """Best wall-clock time of fn(z) (page faults on fresh temporaries included, if any)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(z)
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write results here instead of printing")
    ap.add_argument("--quick", action="store_true", help="only 1024x1024, the target's shape")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(2024)
    results = []
    for rows, n in SHAPES:
        if args.quick and (rows, n) != (1024, 1024):
            continue
        z64 = rng.normal(0.0, 4.0, (rows, n))
        for dtype, z in (("double", z64), ("float", z64.astype(np.float32))):
            for spec, fn in NORMALISERS.items():
                if n == 1 << 24 and spec in ITERATIVE:
                    continue   # minutes per call in numpy
                seconds = best_time(fn, z, 1 if n == 1 << 24 else args.repeats)
                results.append({"spec": spec, "rows": rows, "n": n, "type": dtype, "seconds": seconds})
                if not args.json:
                    print(f"numpy {spec:24s} {rows:6d}x{n:<9d} {dtype:6s} {seconds * 1e3:10.3f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

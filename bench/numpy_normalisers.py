#!/usr/bin/python3
"""The numpy reference of the normaliser family (tests/reference/normalisers.py, the one the golden
tests use), timed on the same shapes and data law as build/bin/sharp-bench-normalisers (logits
~ N(0, 4^2)), for the speed-up column of `make bench`.

The reference is vectorised numpy over rows (one thread: numpy's elementwise kernels do not thread),
in float64 (float input is widened first), written for accuracy rather than speed: softmax via
max/exp/sum, adaptive temperature with the exact entropy, top-k by a stable sort, sparsemax and
1.5-entmax sort-based, alpha-entmax and Stieltjes by bisection until the bracket is two adjacent
doubles (docs/science.md#reference-implementation). Prints one line per case, or writes JSON with
--json FILE.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/numpy_normalisers.py [--json out.json] [--quick]

scripts/bench_normalisers.sh runs it with glibc's MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_
raised, so temporaries reuse memory (numpy's best case; without it page faults dominate and vary).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import normalisers as reference  # noqa: E402

TIMED = ["softmax", "adaptive", "ssmax:s=1", "topk:k=8", "argmax", "sparsemax", "entmax15",
         "entmax:alpha=1.25", "asentmax:b=0.5:gamma=1", "stieltjes:q=4"]
SHAPES = [(1, 1 << 24), (1024, 1024), (16384, 16)]
ITERATIVE = {"entmax:alpha=1.25", "stieltjes:q=4"}   # bisection: minutes per call at 2^24


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
            for spec in TIMED:
                if n == 1 << 24 and spec in ITERATIVE:
                    continue
                seconds = best_time(lambda x: reference.forward(spec, x), z, 1 if n == 1 << 24 else args.repeats)
                results.append({"spec": spec, "rows": rows, "n": n, "type": dtype, "seconds": seconds})
                if not args.json:
                    print(f"numpy {spec:24s} {rows:6d}x{n:<9d} {dtype:6s} {seconds * 1e3:10.3f} ms")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

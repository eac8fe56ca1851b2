#!/usr/bin/python3
"""sharp.normalise called from Python against what a Python user would otherwise call (numpy, and
torch.softmax where PyTorch is installed) and against the C++ benchmark of the same kernels
(sharp-bench-normalisers), on the same shapes and data law (logits ~ N(0, 4^2)), 1 thread each:

- call overhead: one row of 16 logits per call (the time of a call that does almost no work);
- throughput: 1024x1024 (large rows) and 16384x16 (short rows), float32 and float64; the module's
  rate as a share of the C++ benchmark's (target >= 90% for large rows, docs/architecture.md#benchmarks).

numpy's softmax is the usual three lines in the array's dtype; its adaptive temperature is the
reference implementation of tests/reference (float64). Times are the calling thread's CPU time
(everything runs on it: 1 thread), for the module and for the C++ benchmark alike (its cpu_time),
so that other processes on a shared machine do not count; the best of interleaved repetitions.
Reported, never asserted.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_normalise.py --bin build/bin
(scripts/bench_python.sh, part of `make bench`, runs it so.)
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import normalisers as reference  # noqa: E402
import sharp  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

SHAPES = [(1024, 1024), (16384, 16)]
TYPES = {"float": np.float32, "double": np.float64}
SPECS = ["softmax", "adaptive"]


def numpy_softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def candidates(spec, z):
    """{implementation: callable} on the logits z."""
    out = {"sharp": lambda: sharp.normalise(z, spec)}
    if spec == "softmax":
        out["numpy"] = lambda: numpy_softmax(z)
        if torch is not None:
            t = torch.from_numpy(z)
            out["torch"] = lambda: torch.softmax(t, dim=-1)
    else:
        z64 = z.astype(np.float64)
        out["numpy"] = lambda: reference.forward(spec, z64)
    return out


def best_times(cases, repeats, min_seconds):
    """Best CPU time per call of each case (this thread's), repetitions randomly interleaved."""
    order = [key for key in cases for _ in range(repeats)]
    random.Random(1).shuffle(order)
    best = {key: float("inf") for key in cases}
    for key in order:
        fn = cases[key]
        fn()   # warm: first-touch pages, caches
        calls, start = 0, time.thread_time()
        while True:
            fn()
            calls += 1
            elapsed = time.thread_time() - start
            if elapsed >= min_seconds:
                break
        best[key] = min(best[key], elapsed / calls)
    return best


def cpp_time(bin_dir, spec, rows, n, dtype, min_seconds):
    """The C++ benchmark's CPU time per call of forward/<spec>/<rows>x<n>/<dtype>/threads:1."""
    pattern = f"^forward/{spec}/{rows}x{n}/{dtype}/threads:1/"
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        subprocess.run([os.path.join(bin_dir, "sharp-bench-normalisers"), f"--benchmark_filter={pattern}",
                        f"--benchmark_min_time={min_seconds}", f"--benchmark_out={report.name}",
                        "--benchmark_out_format=json"], capture_output=True, text=True, check=True)
        (b,) = [b for b in json.load(open(report.name))["benchmarks"] if b.get("run_type") == "iteration"]
    return b["cpu_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
    parser.add_argument("--repeats", type=int, default=int(os.environ.get("REPS", 3)))
    parser.add_argument("--min-time", type=float, default=float(os.environ.get("MIN_TIME", 0.2)))
    args = parser.parse_args()
    sharp.set_num_threads(1)
    if torch is not None:
        torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    print(f"# sharp.normalise from Python ({sharp.simd_isa()}), 1 thread; numpy {np.__version__}, "
          f"PyTorch {torch.__version__ if torch is not None else 'not installed'}; best of {args.repeats}, "
          f"interleaved; load average at start {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print("Call overhead: one call on one row of 16 logits (microseconds of CPU per call)")
    print()
    print("| type | sharp.normalise softmax | sharp.normalise adaptive | numpy softmax | torch.softmax |")
    print("|---|---|---|---|---|")
    for dtype, np_type in TYPES.items():
        z = (4 * rng.standard_normal((1, 16))).astype(np_type)
        cases = {("sharp", "softmax"): lambda: sharp.normalise(z, "softmax"),
                 ("sharp", "adaptive"): lambda: sharp.normalise(z, "adaptive"),
                 ("numpy", "softmax"): lambda: numpy_softmax(z)}
        if torch is not None:
            t = torch.from_numpy(z)
            cases[("torch", "softmax")] = lambda: torch.softmax(t, dim=-1)
        best = best_times(cases, args.repeats, args.min_time / 2)
        us = lambda key: f"{best[key] * 1e6:.2f}" if key in best else "n/a"
        print(f"| {dtype} | {us(('sharp', 'softmax'))} | {us(('sharp', 'adaptive'))} | "
              f"{us(('numpy', 'softmax'))} | {us(('torch', 'softmax'))} |")
    print()
    # Each case's C++ benchmark and Python calls alternate, round after round, and each keeps its
    # best round: on a shared machine the two then see the same minutes, and a busy spell hits
    # one round rather than one side of the comparison.
    rows_out = []
    for spec in SPECS:
        for rows, n in SHAPES:
            for dtype, np_type in TYPES.items():
                z = (4 * rng.standard_normal((rows, n))).astype(np_type)
                best, cpp = {}, float("inf")
                for _ in range(args.repeats):
                    cpp = min(cpp, cpp_time(args.bin, spec, rows, n, dtype, args.min_time))
                    for key, seconds in best_times(candidates(spec, z), 1, args.min_time).items():
                        best[key] = min(best.get(key, float("inf")), seconds)
                rows_out.append((spec, rows, n, dtype, z.nbytes, cpp, best))
    print("Throughput (ms of CPU per call; GB/s counts the logits read and the probabilities written once)")
    print()
    print("| kernel | shape | type | C++ bench ms | sharp.normalise ms | GB/s | of C++ | numpy ms | torch.softmax ms |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec, rows, n, dtype, nbytes, c, best in rows_out:
        torch_ms = f"{best['torch'] * 1e3:.3f}" if "torch" in best else "n/a"
        print(f"| {spec} | {rows}x{n} | {dtype} | {c * 1e3:.3f} | {best['sharp'] * 1e3:.3f} | "
              f"{2 * nbytes / best['sharp'] / 1e9:.1f} | {c / best['sharp'] * 100:.0f}% | {best['numpy'] * 1e3:.3f} | "
              f"{torch_ms} |")


if __name__ == "__main__":
    main()

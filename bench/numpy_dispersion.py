#!/usr/bin/python3
"""numpy reference of the dispersion kernel (sharp-bounds, docs/science.md#dispersion-lemma): the same
streaming point in chunked numpy, one core, for `make bench` (bench/numpy_dispersion_ref.sh,
scripts/bench_dispersion.sh).

Uniform logits on [0, spread], temperature theta; computes alpha_max, alpha_min and the entropy of
softmax over n logits without holding them all. Prints one line with the rate in logits per second.
Run it with OPENBLAS_NUM_THREADS=1 (numpy's random and exp are single-threaded anyway).

    /usr/bin/python3 bench/numpy_dispersion.py --n 268435456 --spread 4 --theta 1
"""
import argparse
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 28)
    ap.add_argument("--spread", type=float, default=4.0)
    ap.add_argument("--theta", type=float, default=1.0)
    ap.add_argument("--chunk", type=int, default=1 << 20)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    shift = a.spread / a.theta  # logits/theta lie in [0, shift]; subtract the upper end for stability
    total = weighted = 0.0
    lo, hi = np.inf, -np.inf
    start = time.perf_counter()
    left = a.n
    while left > 0:
        m = min(a.chunk, left)
        e = rng.random(m) * shift - shift
        w = np.exp(e)
        total += w.sum()
        weighted += (e * w).sum()
        lo, hi = min(lo, e.min()), max(hi, e.max())
        left -= m
    sec = time.perf_counter() - start
    entropy = np.log(total) - weighted / total
    print(f"n={a.n} alpha_max={np.exp(hi) / total:.6e} alpha_min={np.exp(lo) / total:.6e} "
          f"entropy={entropy:.6f} seconds={sec:.2f} rate={a.n / sec / 1e6:.1f}M_logits_per_s")


if __name__ == "__main__":
    main()

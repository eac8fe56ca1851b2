#!/usr/bin/python3
"""The optional external golden file (CMake SHARP_EXTERNAL_GOLDEN_DIR: an independent
implementation's forward outputs, docs/science.md#reference-implementation) through sharp-normalise:
every case and spec, per-row L1 difference <= 1e-9 (that file's own rounding is of the order of
ulp(max |z|), so no relative bound). Exit 77 (ctest: skipped) with the reason when the file is absent.
Run by ctest with SHARP_BIN_DIR and SHARP_EXTERNAL_GOLDEN_DIR set."""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_support import BIN as BIN_DIR, run  # noqa: E402

BIN = os.path.join(BIN_DIR, "sharp-normalise")
GOLDEN = os.path.join(os.environ.get("SHARP_EXTERNAL_GOLDEN_DIR", ""), "normalisers.h5")   # set by ctest


def main():
    if not os.path.exists(GOLDEN):
        print(f"SKIPPED: external golden file {GOLDEN} is absent (CMake SHARP_EXTERNAL_GOLDEN_DIR)")
        return 77
    failures, outputs = [], 0
    with h5py.File(GOLDEN, "r") as f:
        for case, g in f["cases"].items():
            text = "\n".join(" ".join(f"{x:.17g}" for x in row) for row in g["logits"][()]) + "\n"
            for name, ds in g.items():
                if not name.startswith("out"):
                    continue
                spec = ds.attrs["spec"]
                spec = spec.decode() if isinstance(spec, bytes) else spec
                res = run("sharp-normalise", "--normaliser", spec, input=text, timeout=120)
                outputs += 1
                if res.returncode != 0:
                    failures.append(f"{case} {spec}: exit {res.returncode} {res.stderr.strip()}")
                    continue
                got = np.array([[float(t) for t in line.split()] for line in res.stdout.splitlines()])
                l1 = np.abs(got - ds[()]).sum(axis=1).max()
                if not l1 <= 1e-9:
                    failures.append(f"{case} {spec}: row L1 difference {l1:.3g}")
    for line in failures:
        print("FAIL:", line)
    print(f"{outputs} external golden outputs through {BIN}: {len(failures)} failure(s)")
    return 1 if failures or outputs < 400 else 0


if __name__ == "__main__":
    sys.exit(main())

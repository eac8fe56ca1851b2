#!/usr/bin/env bash
# The Python module's part of `make bench` (docs/architecture.md#benchmarks): sharp.normalise called
# from Python against numpy, torch.softmax (where PyTorch is installed) and the C++ benchmark of the
# same kernels (bench/python_normalise.py prints the tables).
#   bash scripts/bench_python.sh [BIN_DIR]      (default build/bin; the module is BIN_DIR/../python)
# Environment: REPS (repetitions, default 3), MIN_TIME (seconds per measurement, default 0.2).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build/bin}" && pwd)"
# As for the numpy reference (scripts/bench_normalisers.sh): freed buffers are reused rather than
# mapped afresh, so every implementation's result array costs no page faults.
MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824 OPENBLAS_NUM_THREADS=1 \
  PYTHONPATH="$bin/../python${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 "$root/bench/python_normalise.py" --bin "$bin"

#!/usr/bin/env bash
# make bench: every benchmark of the suite with its reference implementation, one after another
# (the machine is shared and noisy: read the numbers as ranges, repeat when in doubt).
set -euo pipefail
bin=${1:-build/bin}
# Once: the ISA the hot kernels dispatched to (SHARP_SIMD=avx2|avx512 forces one) and the versions of
# the references the benchmarks compare against.
echo "== dispatched ISA: $("$bin/sharp-simd")"
numpy_version=$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)' 2>/dev/null || echo "not installed")
torch_version=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo "not installed")
echo "== references: numpy $numpy_version, PyTorch $torch_version"
for part in scripts/bench_*.sh; do
  echo "== $part"
  bash "$part" "$bin"
done

#!/usr/bin/env bash
# The dispersion kernel against its targets (docs/architecture.md#benchmarks):
#  - sharp-bounds --n 2^30 --spread 4 --theta 1 --logits uniform --trials 1: peak RSS and logits/s
#    per core, read back from the result file's /timing;
#  - the same streaming point in chunked numpy (bench/numpy_dispersion.py, one core);
#  - the Google Benchmark of the kernel's parts (RNG, exp, whole row), when built.
set -euo pipefail
bin=${1:-build/bin}
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for threads in 1 2; do
  "$bin/sharp-bounds" --n 2^30 --spread 4 --theta 1 --logits uniform --trials 1 --threads "$threads" \
      --out "$tmp/b$threads.h5" --quiet
  $py - "$tmp/b$threads.h5" "$threads" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    wall = float(f["timing/wall_seconds"][0]); rss = int(f["timing/peak_rss_bytes"][0])
    n = int(f["points/params/n"][0]); threads = int(sys.argv[2])
    print(f"sharp-bounds n=2^30 threads={threads}: {wall:.2f} s, {n / wall / 1e9:.3f} G logits/s "
          f"({n / wall / 1e9 / threads:.3f} per core), peak RSS {rss / 2**20:.1f} MiB")
PY
done

echo "numpy reference (1 core, n=2^28):"
OPENBLAS_NUM_THREADS=1 $py "$(dirname "$0")/../bench/numpy_dispersion.py" --n 268435456 --spread 4 --theta 1

if [ -x "$bin/sharp-bench-dispersion" ]; then
  "$bin/sharp-bench-dispersion" --benchmark_counters_tabular=true
fi

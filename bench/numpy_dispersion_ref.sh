#!/usr/bin/env bash
# sharp's dispersion kernel against the numpy reference on the reference's own point (uniform
# logits, n = 2^28, spread 4, theta 1): rates in logits/s and their ratio, for 1 and 2 threads.
#   bash bench/numpy_dispersion_ref.sh [BIN_DIR]
# The machine is shared and noisy: each side runs 3 times and the best run counts.
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are left as the environment has them (docs/architecture.md#benchmarks).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../build/bin}"
python=/usr/bin/python3

best_numpy=0
for _ in 1 2 3; do
  line=$(OPENBLAS_NUM_THREADS=1 "$python" "$here/numpy_dispersion.py" --n 268435456 --spread 4 --theta 1)
  echo "numpy: $line"
  rate=$(sed -n 's/.*rate=\([0-9.]*\)M_logits_per_s.*/\1/p' <<<"$line")
  best_numpy=$("$python" -c "print(max($best_numpy, $rate))")
done

json=$(mktemp)
trap 'rm -f "$json"' EXIT
"$bin/sharp-bench-dispersion" --benchmark_filter='^dispersion_row/uniform/1x268435456/' --benchmark_repetitions=3 \
  --benchmark_format=json >"$json"
"$python" - "$json" "$best_numpy" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
numpy = float(sys.argv[2]) * 1e6
wall, core = {}, {}
for r in runs:
    if r.get("run_type") != "iteration":
        continue
    threads = int(r["name"].split("threads:")[1].split("/")[0])
    wall[threads] = max(wall.get(threads, 0.0), r["logits/s"])
    core[threads] = max(core.get(threads, 0.0), r["logits/s/core"])
print(f"numpy reference (1 core, wall clock): {numpy / 1e6:.1f} M logits/s")
for threads in sorted(wall):
    print(f"sharp, {threads} thread(s): {wall[threads] / 1e6:.1f} M logits/s wall = {wall[threads] / numpy:.2f}x numpy; "
          f"{core[threads] / 1e6:.1f} M logits per CPU-second = {core[threads] / numpy:.2f}x numpy per core")
PY

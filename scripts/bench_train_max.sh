#!/usr/bin/env bash
# The max-retrieval part of `make bench` (docs/architecture.md#benchmarks, bench/README.md): the
# training step of every remedy and the evaluation of every normaliser at n = 2^20
# (build/bin/sharp-bench-train-max); the peak memory of one evaluation point per normaliser at
# n = 2^20 (sharp-eval-max, one thread, one set: /timing/peak_rss_bytes of its result file; the
# softmax family streams, the others keep the set's logits); then the same training step in
# PyTorch on CPU (bench/torch_max_retrieval.py) when python3-torch is installed (make bench
# installs it: scripts/deps.sh --bench; make test never needs it).
#   bash scripts/bench_train_max.sh [BIN_DIR]      (default build/bin)
# Environment: FILTER (a --benchmark_filter regex), TORCH=0 to skip the PyTorch reference,
# MEMORY=0 to skip the memory runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/bin}"
"$bin/sharp-bench-train-max" --benchmark_filter="${FILTER:-.}"
if [ "${MEMORY:-1}" != 0 ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$bin/sharp-train-max" --steps 1 --eval-samples 1 --out "$tmp/model.h5" --quiet --threads 1
  echo "peak memory of one sharp-eval-max point at n = 2^20, 1 set, 1 thread (normaliser: MiB, s):"
  for x in softmax adaptive ssmax:s=0.36067376022224085 argmax topk:k=4 entmax15 sparsemax \
           entmax:alpha=1.3 asentmax:b=0.5:gamma=0.5 stieltjes:q=2; do
    out="$tmp/eval-$(echo "$x" | tr ':=.' '___').h5"
    "$bin/sharp-eval-max" --checkpoint "$tmp/model.h5" --n 2^20 --samples 1 --map-samples 0 \
      --normaliser "$x" --threads 1 --out "$out" --quiet
    /usr/bin/python3 - "$out" "$x" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    print(f"  memory/{sys.argv[2]}/1x1048576/float  {f['timing/peak_rss_bytes'][0] / 2**20:8.1f} MiB  "
          f"{f['timing/wall_seconds'][0]:6.2f} s")
PY
  done
fi
if [ "${TORCH:-1}" != 0 ]; then
  if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    /usr/bin/python3 "$root/bench/torch_max_retrieval.py"
  else
    echo "PyTorch reference skipped: python3-torch is not installed (apt-get install python3-torch)" >&2
  fi
fi

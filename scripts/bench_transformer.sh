#!/usr/bin/env bash
# The transformer's part of `make bench` (docs/architecture.md#benchmarks): attention against SGEMM
# at n = 2^14, d_head 64, a training step of the default model (32×256 and 8×64 tokens) and of the
# text study's model (64 minimum samples at lengths 4–16, padded to L tokens), 1 and 2 threads
# (build/bin/sharp-bench-transformer), then the same models, batches and optimiser in PyTorch on CPU
# (bench/torch_transformer.py, told L) when python3-torch is installed (`make bench` installs it:
# scripts/deps.sh --bench; make test never needs it).
#   bash scripts/bench_transformer.sh [BIN_DIR]      (default build/bin)
# Environment: FILTER (a --benchmark_filter regex), TORCH=0 to skip the PyTorch reference.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/bin}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$bin/sharp-bench-transformer" --benchmark_filter="${FILTER:-.}" | tee "$out"
# The study batch's padded length, from the benchmark's name (train_step/study/64xL/float).
length="$(sed -n 's|.*train_step/study/64x\([0-9]*\)/float.*|\1|p' "$out" | head -1)"
if [ "${TORCH:-1}" != 0 ]; then
  if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    STUDY_LENGTH="${length:-110}" /usr/bin/python3 "$root/bench/torch_transformer.py"
  else
    echo "PyTorch reference skipped: python3-torch is not installed (apt-get install python3-torch)" >&2
  fi
fi

#!/usr/bin/env bash
# The transformer's part of `make bench` (docs/architecture.md#benchmarks): attention against SGEMM
# at n = 2^14, d_head 64, and a training step of the default model (32×256 and 8×64 tokens), 1 and 2
# threads (build/bin/sharp-bench-transformer), then the same model, batch and optimiser in PyTorch on
# CPU (bench/torch_transformer.py) when python3-torch is installed (`make bench` installs it: scripts/deps.sh --bench;
# make test never needs it).
#   bash scripts/bench_transformer.sh [BIN_DIR]      (default build/bin)
# Environment: FILTER (a --benchmark_filter regex), TORCH=0 to skip the PyTorch reference.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/build/bin}"
"$bin/sharp-bench-transformer" --benchmark_filter="${FILTER:-.}"
if [ "${TORCH:-1}" != 0 ]; then
  if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    /usr/bin/python3 "$root/bench/torch_transformer.py"
  else
    echo "PyTorch reference skipped: python3-torch is not installed (apt-get install python3-torch)" >&2
  fi
fi

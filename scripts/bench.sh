#!/usr/bin/env bash
# make bench: every benchmark of the suite with its reference implementation, one after another
# (the machine is shared and noisy: read the numbers as ranges, repeat when in doubt).
set -euo pipefail
bin=${1:-build/bin}
for part in scripts/bench_*.sh; do
  echo "== $part"
  bash "$part" "$bin"
done

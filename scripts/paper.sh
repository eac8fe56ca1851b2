#!/usr/bin/env bash
# make paper: run every quick-scale sweep (sweeps/quick/<experiment>.cfg -> results/<experiment>.h5).
# Finished results are up to date on a rerun (a no-op); an interrupted sweep resumes.
set -euo pipefail
bin=${1:-build/bin}
results=${2:-results}
mkdir -p "$results"
start=$(date +%s)
for cfg in sweeps/quick/*.cfg; do
  exp=$(basename "$cfg" .cfg)
  echo "== sharp-$exp --config $cfg"
  t0=$(date +%s)
  "$bin/sharp-$exp" --config "$cfg" --out "$results/$exp.h5"
  echo "   ($(( $(date +%s) - t0 )) s)"
done
echo "paper: all sweeps done in $(( $(date +%s) - start )) s"

#!/usr/bin/env bash
# make paper: run every sweep of a scale (sweeps/<scale>/<experiment>.cfg -> RESULTS/<experiment>.h5),
# then nothing else (the Makefile draws the figures). Finished results are up to date on a rerun (a
# no-op); an interrupted sweep resumes.
#
#   bash scripts/paper.sh [BIN_DIR] [RESULTS_DIR] [SCALE]      (defaults: build/bin results quick)
#
# A config that reads another experiment's results says so in a line
#   # input: checkpoint = train-max
# which passes --checkpoint RESULTS/train-max.h5 and runs it after sweeps/<scale>/train-max.cfg.
# The others run in alphabetical order.
set -euo pipefail
bin=${1:-build/bin}
results=${2:-results}
scale=${3:-quick}
mkdir -p "$results"
start=$(date +%s)

# The order: inputs first (checked before anything runs: a missing input or a cycle is exit 2).
inputs_of() { sed -n 's/^# input: *\([a-z_-]*\) *= *\([a-z0-9-]*\) *$/\1 \2/p' "$1"; }
declare -A placed=()
order=()
pending=(sweeps/"$scale"/*.cfg)
while ((${#pending[@]})); do
  waiting=()
  for cfg in "${pending[@]}"; do
    ready=1
    while read -r flag source; do
      [[ -f sweeps/$scale/$source.cfg ]] || { echo "paper: $cfg needs $source, which has no sweeps/$scale/$source.cfg" >&2; exit 2; }
      [[ -n ${placed[$source]:-} ]] || ready=0
    done < <(inputs_of "$cfg")
    if ((ready)); then
      order+=("$cfg")
      placed[$(basename "$cfg" .cfg)]=1
    else
      waiting+=("$cfg")
    fi
  done
  if ((${#waiting[@]} == ${#pending[@]})); then
    echo "paper: the inputs of ${waiting[*]} form a cycle" >&2
    exit 2
  fi
  pending=("${waiting[@]+"${waiting[@]}"}")
done

for cfg in "${order[@]}"; do
  exp=$(basename "$cfg" .cfg)
  inputs=()
  while read -r flag source; do inputs+=("--$flag" "$results/$source.h5"); done < <(inputs_of "$cfg")
  echo "== sharp-$exp --config $cfg ${inputs[*]}"
  t0=$(date +%s)
  "$bin/sharp-$exp" --config "$cfg" "${inputs[@]}" --out "$results/$exp.h5"
  echo "   ($(( $(date +%s) - t0 )) s)"
done
echo "paper: all sweeps done in $(( $(date +%s) - start )) s"

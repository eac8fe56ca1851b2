#!/usr/bin/env bash
# make paper: run every sweep of a scale (sweeps/<scale>/<experiment>.cfg -> RESULTS/<experiment>.h5),
# building first only the binaries those sweeps run, then the figures and the paper page; prints how
# long each stage took. Finished results are up to date on a rerun (a no-op); an interrupted sweep
# resumes.
#
#   bash scripts/paper.sh [--build BUILD_DIR [--jobs N]] [--figures] [--sweeps 'GLOB...'] [BIN_DIR] [RESULTS_DIR] [SCALE]
#
# Defaults: BIN_DIR build/bin, RESULTS_DIR results, SCALE quick. --build builds the sharp-<experiment>
# targets of the sweeps in the (configured) CMake build directory; --figures then runs
# analysis/make_figures.py and analysis/make_report.py (results/report/index.html).
#
# --sweeps 'GLOB...' runs only the sweeps whose name (sweeps/<scale>/NAME.cfg) matches one of the
# blank-separated shell patterns, e.g. --sweeps 'train-text* eval-text*' or --sweeps 'bounds
# weight-bound'; a selected sweep's input that is not selected must already be in RESULTS_DIR. A
# pattern that matches no sweep is an error (exit 2) before anything runs.
#
# SCALE cluster runs nothing: it prints, in dependency order, the sharp-submit command of every sweep
# (its `# submit:` line holds the options), for a Slurm cluster.
#
# A config that reads another experiment's results says so in a line
#   # input: checkpoint = train-max
# which passes --checkpoint RESULTS/train-max.h5 and runs it after sweeps/<scale>/train-max.cfg.
# The others run in alphabetical order.
#
# Ctrl-C (SIGINT) or SIGTERM: the running binary is told, checkpoints and exits 3; the script then
# exits 3 without starting the next stage, and the same command resumes. Each finished stage's wall
# time is appended to RESULTS/stage-times.tsv (stage, seconds, cores, scale, UTC date), which
# `make publish` copies into the manifest of shipped results.
set -euo pipefail
build_dir=""
jobs=$(nproc)
figures=0
sweeps=""
while (($#)); do
  case $1 in
    --build) build_dir=$2; shift 2 ;;
    --sweeps) sweeps=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --figures) figures=1; shift ;;
    --*) echo "paper: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
bin=${1:-build/bin}
results=${2:-results}
scale=${3:-quick}
python=/usr/bin/python3
analysis=$(cd "$(dirname "$0")/../analysis" && pwd)
start=$(date +%s)

# Stage times, printed at the end (and on failure, so a slow stage is visible either way).
stages=()
stage_start=0
begin() { stage_start=$(date +%s); echo "== $*"; }
end() {
  local seconds=$(( $(date +%s) - stage_start ))
  stages+=("$(printf '%6d s  %s' "$seconds" "$1")")
  echo "   ($seconds s)"
}
summary() {
  ((${#stages[@]})) || return 0
  echo "paper: stage times ($scale scale)"
  printf '  %s\n' "${stages[@]}"
  echo "paper: total $(( $(date +%s) - start )) s"
  stages=()  # printed once
}
trap 'status=$?; ((status == 0)) || summary; exit $status' EXIT

# The order: inputs first (checked before anything runs: a missing input or a cycle is exit 2).
# A sweep's binary: its line `# experiment: NAME` (several result files of one binary, e.g.
# train-remedies.cfg runs sharp-train-max), else the config's name.
binary_of() { local e; e=$(sed -n 's/^# experiment: *\([a-z0-9-]*\) *$/\1/p' "$1"); echo "sharp-${e:-$(basename "$1" .cfg)}"; }
inputs_of() { sed -n 's/^# input: *\([a-z_-]*\) *= *\([a-z0-9-]*\) *$/\1 \2/p' "$1"; }
submit_of() { sed -n 's/^# submit: *\(.*[^ ]\) *$/\1/p' "$1"; }
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

# --sweeps: keep the selected sweeps, in the same order; an input left out must exist already.
if [[ -n $sweeps ]]; then
  read -r -a patterns <<< "$sweeps"
  selected=()
  declare -A chosen=()
  for cfg in "${order[@]}"; do
    name=$(basename "$cfg" .cfg)
    for pattern in "${patterns[@]}"; do
      # shellcheck disable=SC2053  # the pattern is a glob on purpose
      if [[ $name == ${pattern%.cfg} ]]; then selected+=("$cfg"); chosen[$name]=1; break; fi
    done
  done
  for pattern in "${patterns[@]}"; do
    matched=0
    for cfg in "${order[@]}"; do
      # shellcheck disable=SC2053
      [[ $(basename "$cfg" .cfg) == ${pattern%.cfg} ]] && matched=1
    done
    ((matched)) || { echo "paper: --sweeps '$pattern' matches no sweeps/$scale/*.cfg" >&2; exit 2; }
  done
  if [[ $scale != cluster ]]; then
    for cfg in "${selected[@]}"; do
      while read -r flag source; do
        [[ -n ${chosen[$source]:-} || -f $results/$source.h5 ]] || {
          echo "paper: $cfg reads $results/$source.h5, which does not exist: add $source to --sweeps or run it first" >&2
          exit 2
        }
      done < <(inputs_of "$cfg")
    done
  fi
  order=("${selected[@]}")
fi

if [[ $scale == cluster ]]; then
  # Nothing runs here: a cluster sweep is hours to hundreds of core-hours (each file's header says
  # how many). Submit in this order; a sweep with an input waits for that result file.
  echo "# $scale scale: submit these from the repository's top directory on the cluster's login node"
  echo "# (build/bin and results/ on a shared file system). A failed or timed-out task is completed by"
  echo "# the same line with --resubmit-missing. Each file's header gives its cost in core-hours."
  for cfg in "${order[@]}"; do
    exp=$(basename "$cfg" .cfg)
    inputs=()
    while read -r flag source; do
      inputs+=("--$flag" "$results/$source.h5")
      echo "# after $results/$source.h5 is merged:"
    done < <(inputs_of "$cfg")
    options=$(submit_of "$cfg")
    [[ -n $options ]] || { echo "paper: $cfg has no '# submit:' line with its sharp-submit options" >&2; exit 2; }
    echo "runners/sharp-submit $options -- $(binary_of "$cfg") --config $cfg ${inputs[*]+${inputs[*]} }--out $results/$exp.h5"
  done
  trap - EXIT
  exit 0
fi

if [[ -n $build_dir ]]; then
  targets=()
  for cfg in "${order[@]}"; do targets+=("$(binary_of "$cfg")"); done
  mapfile -t targets < <(printf '%s\n' "${targets[@]}" | awk '!seen[$0]++')
  begin "build ${targets[*]}"
  cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}"
  end "build (${#targets[@]} binaries)"
fi

# One stage in the background so that a signal reaches this script at once: it is passed on to the
# binary (which checkpoints, keeps its finished points and exits 3), and the script exits with the
# binary's status, 3, instead of going on to the next stage. The binary runs in its own session
# (setsid) so that a Ctrl-C on the terminal reaches it once, through this script: a second SIGINT
# would end it at once, without its checkpoint.
run_stage() {
  local child status
  setsid "$@" &
  child=$!
  trap 'kill -INT "$child" 2>/dev/null || true; interrupted=1' INT
  trap 'kill -TERM "$child" 2>/dev/null || true; interrupted=1' TERM
  interrupted=0
  while :; do
    status=0
    wait "$child" || status=$?
    # wait returns early (status > 128) when a trapped signal arrives; wait again for the binary.
    if ((interrupted)) && kill -0 "$child" 2>/dev/null; then continue; fi
    break
  done
  trap - INT TERM
  if ((interrupted)); then
    echo "paper: interrupted during ${1##*/}; rerun the same command to resume" >&2
    ((status != 0)) || status=3
    exit "$status"
  fi
  return "$status"
}

mkdir -p "$results"
sweeps_start=$(date +%s)
for cfg in "${order[@]}"; do
  exp=$(basename "$cfg" .cfg)
  inputs=()
  while read -r flag source; do inputs+=("--$flag" "$results/$source.h5"); done < <(inputs_of "$cfg")
  binary=$(binary_of "$cfg")
  begin "$binary --config $cfg ${inputs[*]}"
  run_stage "$bin/$binary" --config "$cfg" "${inputs[@]}" --out "$results/$exp.h5"
  end "$binary$([[ $binary == "sharp-$exp" ]] || echo " -> $exp.h5")"
  printf '%s\t%d\t%d\t%s\t%s\n' "$exp.h5" "$(( $(date +%s) - stage_start ))" "$(nproc)" "$scale" \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$results/stage-times.tsv"
done
echo "paper: all sweeps done in $(( $(date +%s) - sweeps_start )) s"

figures_status=0
report_status=0
if ((figures)); then
  begin "figures: analysis/make_figures.py $results"
  "$python" "$analysis/make_figures.py" "$results" || figures_status=$?
  end "figures"
  begin "report: analysis/make_report.py $results"
  # exit 1: the page is written but a section failed (it says which); still print the summary
  "$python" "$analysis/make_report.py" "$results" || report_status=$?
  end "report"
fi
summary
if ((figures)); then
  page=$(cd "$results" && pwd)/report/index.html
  echo "paper: the report is $results/report/index.html (open file://$page)"
fi
exit "$((figures_status ? figures_status : report_status))"

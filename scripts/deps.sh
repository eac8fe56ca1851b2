#!/usr/bin/env bash
# Installs the Debian packages the suite needs, only those missing, and says which.
# Idempotent: a second run prints "all N packages present" and installs nothing.
#   bash scripts/deps.sh           install what is missing (make deps)
#   bash scripts/deps.sh --check   install nothing: exit 0 when all are present, else print one line
#                                  naming the missing ones and saying to run `make deps`, exit 1
#                                  (make and make configure run this before CMake, whose own message
#                                  would be "could not find xtl" and the like)
#   bash scripts/deps.sh --bench   also the benchmarks' reference (python3-torch: PyTorch on CPU, what a
#                                  user would otherwise pick); make bench runs this, make test never
# SHARP_DEPS_INSTALLED=FILE replaces the dpkg database by FILE, one installed package a line (the
# test of the hint uses it to simulate a machine that lacks a package).
set -euo pipefail
check_only=0
bench=0
for arg in "$@"; do
  case "$arg" in
    --check) check_only=1 ;;
    --bench) bench=1 ;;
    *) echo "deps.sh: unknown argument '$arg' (allowed: --check, --bench)" >&2; exit 2 ;;
  esac
done
packages=(
  build-essential cmake pkg-config clang-format
  libxtensor-dev libxsimd-dev xtl-dev libxtensor-blas-dev libopenblas-openmp-dev liblapack-dev
  libhdf5-dev hdf5-tools libboost-program-options-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-h5py python3-numpy python3-matplotlib python3-scipy python3-pytest
  pybind11-dev python3-pybind11 python3-dev python3-xarray python3-h5netcdf
  slurm-wlm munge
  chromium chromium-driver python3-selenium
)
[ $bench -eq 0 ] || packages+=(python3-torch)
# The installed packages among ours, one name a line (one dpkg-query call: make runs this every time).
installed_packages() {
  if [ -n "${SHARP_DEPS_INSTALLED:-}" ]; then
    cat "$SHARP_DEPS_INSTALLED"
  else
    dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null |
      awk '$NF == "installed" && $(NF-1) == "ok" {print $1}' || true
  fi
}
if [ $check_only -eq 1 ] && [ -z "${SHARP_DEPS_INSTALLED:-}" ] && ! command -v dpkg-query >/dev/null; then
  exit 0  # not a Debian machine: nothing to check against, let CMake speak
fi
declare -A present=()
while read -r p; do [ -n "$p" ] && present[$p]=1; done < <(installed_packages)
missing=()
for p in "${packages[@]}"; do
  [ -n "${present[$p]:-}" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  [ $check_only -eq 1 ] || echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
if [ $check_only -eq 1 ]; then
  echo "sharp: missing Debian package(s) ${missing[*]}: run \`make deps\` (as root or with sudo) to install them" >&2
  exit 1
fi
echo "deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
echo "deps: done"

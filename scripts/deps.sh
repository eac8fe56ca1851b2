#!/usr/bin/env bash
# Installs the Debian packages the suite needs, only those missing, and says which.
# Idempotent: a second run prints "all N packages present" and installs nothing.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libxtensor-dev libxsimd-dev xtl-dev libxtensor-blas-dev libopenblas-openmp-dev liblapack-dev
  libhdf5-dev hdf5-tools libboost-program-options-dev
  libopenmpi-dev openmpi-bin
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-h5py python3-numpy python3-matplotlib python3-scipy python3-pytest
  slurm-wlm munge
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
echo "deps: done"

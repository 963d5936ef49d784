#!/usr/bin/env bash
# Install every Debian 12 package mft needs to build, test and analyse runs.
# Idempotent: returns at once when everything is already present.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  openmpi-bin libopenmpi-dev
  petsc-dev
  libhdf5-openmpi-dev hdf5-tools
  libboost-program-options-dev
  zlib1g-dev
  libgtest-dev
  libopenblas-dev
  python3-h5py python3-numpy python3-scipy python3-matplotlib python3-pot python3-sklearn python3-pandas python3-xarray
  python3-venv python3-pip python3-setuptools python3-wheel
  slurm-wlm munge
  jargon-text
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: missing packages (${missing[*]}) and not root; install them or run as root" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# petsc-dev's post-install prints "no alternatives for petsc" and still succeeds.
$SUDO apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
echo "install-deps: done"

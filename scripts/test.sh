#!/usr/bin/env bash
# Installs what is missing, configures, builds, and runs every test (the MPI
# ones under mpiexec) through ctest, a test per core.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$MFT_ROOT/scripts/install-deps.sh"
mft_build_progress
cd "$MFT_BUILD"
# A test per core unless told otherwise (-j N, --parallel N; the tests bind
# no rank to a core and depend on no timing).
jobs=(-j "$(mft_cores)")
for arg in "$@"; do
  case "$arg" in -j*|--parallel*) jobs=() ;; esac
done
echo "running the tests (ctest ${jobs[*]} $*)"
ctest --output-on-failure "${jobs[@]}" "$@"

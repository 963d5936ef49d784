#!/usr/bin/env bash
# Installs what is missing, configures, builds, and runs every test (the MPI
# ones under mpiexec) through ctest.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$MFT_ROOT/scripts/install-deps.sh"
mft_build_progress
cd "$MFT_BUILD"
echo "running the tests (ctest $*)"
ctest --output-on-failure "$@"

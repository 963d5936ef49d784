#!/usr/bin/env bash
# The hostile-file corpus, PETSc's file options, the restart tests and mixed precision on a build with AddressSanitizer
# and UndefinedBehaviorSanitizer (MFT_SANITIZE=ON, in build-sanitize/): a read
# past a buffer, a use after free or undefined behaviour in any input path ends
# the case with the sanitizer's report, and the check fails. About 15 minutes
# on 2 cores (the build, then the cases at a third of their usual speed).
set -euo pipefail
source "$(dirname "$0")/env.sh"
build=${MFT_SANITIZE_BUILD:-$MFT_ROOT/build-sanitize}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$MFT_ROOT" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMFT_SANITIZE=ON -DMFT_BUILD_TESTS=OFF
fi
cmake --build "$build" -j "$(mft_cores)" --target mft
# Open MPI's and PETSc's allocations that live to the exit are not leaks of
# mft's; every other report stops the process with a non-zero status.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=86
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export MFT="$build/apps/mft"
# ASan reserves terabytes of address space for its shadow: no cap on it here.
export MFT_TEST_VM_CAP=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OPENBLAS_NUM_THREADS=1 HDF5_USE_FILE_LOCKING=FALSE MPIEXEC=${MPIEXEC:-mpiexec}
export PYTHON=${MFT_PYTHON:-/usr/bin/python3}
status=0
# The hostile-file corpus, damaged restart files and impossible optimiser
# state, options files, PETSc's file options on every file of a run (the
# sweep over every documented option runs the same code: left to ctest).
"$PYTHON" "$MFT_ROOT/tests/cli/bad_inputs.py" -k '^hostile|^restart|^PETSc (?!documented)|^PETSc.s|options_file' ||
  status=1
bash "$MFT_ROOT/tests/cli/restart.sh" || status=1
bash "$MFT_ROOT/tests/cli/precision.sh" || status=1
[ "$status" -eq 0 ] && echo "sanitize: no report on the hostile-file corpus, PETSc's file options, the restart tests and mixed precision"
exit "$status"

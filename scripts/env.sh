# Sourced by the scripts: the environment mft runs in on one machine.
#
# A site's own set-up (module load ..., PATH, PKG_CONFIG_PATH) goes in one
# file, sourced first: $MFT_SITE_ENV when set, else site-env.sh beside this
# file (copy site-env.example.sh). Every script and batch job sources this
# file, so that one file serves them all.
mft_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mft_site=${MFT_SITE_ENV:-$mft_here/site-env.sh}
if [ -n "${MFT_SITE_ENV:-}" ] && [ ! -f "$mft_site" ]; then
  echo "mft: MFT_SITE_ENV = $MFT_SITE_ENV: no such file" >&2
  return 2 2>/dev/null || exit 2
fi
if [ -f "$mft_site" ]; then
  # Module systems are written for interactive shells: the site file runs
  # without the caller's -e and -u, which come back after it.
  mft_options=$(set +o)
  set +eu
  # shellcheck source=/dev/null
  source "$mft_site"
  eval "$mft_options"
  unset mft_options
fi
unset mft_site
# One BLAS thread per MPI rank: the ranks already use the cores.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# OpenBLAS picks its kernels from the CPU model it reads; in some virtual
# machines it reads one it does not know and falls back to SSE3 kernels
# (DGEMM measured 4x slower than with its AVX-512 ones). Choose them from the
# CPU's flags, unless set; mft's run header says which core runs.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [ -r /proc/cpuinfo ]; then
  mft_cpu_flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  mft_has() { for f in "$@"; do [[ "$mft_cpu_flags" == *" $f "* ]] || return 1; done; }
  if mft_has avx512f avx512dq avx512bw avx512vl; then
    export OPENBLAS_CORETYPE=SkylakeX
  elif mft_has avx2 fma; then
    export OPENBLAS_CORETYPE=Haswell
  fi
  unset -f mft_has
  unset mft_cpu_flags
fi
# Open MPI refuses to run as root unless told it may (containers, CI).
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# On SIGTERM or SIGINT mpirun signals the ranks after this many seconds and
# kills them as many seconds later; mft needs that time to finish the step
# and write its snapshot (Open MPI's default is 1 s).
export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-4}
# Readers (h5py) may open a file while mft still writes it.
export HDF5_USE_FILE_LOCKING=${HDF5_USE_FILE_LOCKING:-FALSE}
# The Python of the analysis tools and batch scripts: $MFT_PYTHON when set,
# else the first of python3 on PATH and /usr/bin/python3 that has h5py.
if [ -z "${MFT_PYTHON:-}" ]; then
  for mft_candidate in python3 /usr/bin/python3; do
    if "$mft_candidate" -c "import h5py, numpy" >/dev/null 2>&1; then
      export MFT_PYTHON=$mft_candidate
      break
    fi
  done
  unset mft_candidate
fi

# Where mft's parts are: a checkout (this file is scripts/env.sh, the
# programs are built in $MFT_BUILD/apps) or an installation (this file is
# PREFIX/share/mft/env.sh, the programs are in PREFIX/bin). MFT_SCRIPTS is
# this folder; MFT_PYTHONPATH holds the mft Python package.
MFT_SCRIPTS=$mft_here
if [ -f "$mft_here/../CMakeLists.txt" ]; then
  MFT_ROOT=$(cd "$mft_here/.." && pwd)
  MFT_BUILD=${MFT_BUILD:-$MFT_ROOT/build}
  MFT_PROGRAM=$MFT_BUILD/apps/mft
  MFT_BENCH_PROGRAM=$MFT_BUILD/apps/mft-bench
  MFT_PYTHONPATH=$MFT_ROOT/scripts
else
  mft_prefix=$(cd "$mft_here/../.." && pwd)
  MFT_ROOT=$mft_here
  MFT_PROGRAM=$mft_prefix/bin/mft
  MFT_BENCH_PROGRAM=$mft_prefix/bin/mft-bench
  MFT_PYTHONPATH=$mft_prefix/lib/python3/dist-packages
  unset mft_prefix
fi
unset mft_here

# mft_cores: the cores this shell may use. GNU nproc answers
# OMP_NUM_THREADS when it is set, and this file sets it to 1 for the ranks'
# BLAS, so the count is asked without it (affinity and cgroup limits still
# count).
mft_cores() {
  env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc
}

# mft_build: configure (once) and build into $MFT_BUILD, one job per core.
mft_build() {
  if [ ! -f "$MFT_BUILD/CMakeCache.txt" ]; then
    cmake -S "$MFT_ROOT" -B "$MFT_BUILD" -DCMAKE_BUILD_TYPE=Release
  fi
  cmake --build "$MFT_BUILD" -j "$(mft_cores)"
}

# mft_build_progress: mft_build that says what it does and shows cmake's
# percentage on one line (rewritten in place on a terminal, a line every 10 %
# elsewhere); the whole output goes to $MFT_BUILD/build.log, and on a failure
# its last 60 lines are shown.
mft_build_progress() {
  mkdir -p "$MFT_BUILD"
  local log="$MFT_BUILD/build.log" shown=-10 line percent status errexit=
  echo "building mft in $MFT_BUILD with $(mft_cores) jobs (a first build takes minutes; log: $log)"
  [[ $- == *e* ]] && errexit=1
  set +e
  mft_build 2>&1 | tee "$log" | while IFS= read -r line; do
    [[ $line =~ ^\[\ *([0-9]+)%\] ]] || continue
    percent=${BASH_REMATCH[1]}
    if [ -t 1 ]; then
      printf '\r  %3d %%' "$percent"
    elif [ "$percent" -ge $((shown + 10)) ]; then
      echo "  $percent %"
      shown=$percent
    fi
  done
  status=${PIPESTATUS[0]}
  [ -n "$errexit" ] && set -e
  if [ -t 1 ]; then printf '\n'; fi
  if [ "$status" -ne 0 ]; then
    echo "the build failed (exit $status); the end of $log:"
    tail -n 60 "$log"
    return "$status"
  fi
  echo "built $MFT_BUILD/apps/mft"
}

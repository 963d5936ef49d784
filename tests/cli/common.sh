# Shared by the end-to-end tests. Needs MFT, MPIEXEC and PYTHON in the
# environment (ctest sets them).
set -u
: "${MFT:?}" "${MPIEXEC:?}" "${PYTHON:?}"
SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../scripts" && pwd)"
WORK=$(mktemp -d /tmp/mft-cli-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# mft_run RANKS ARGS...: runs mft under mpiexec with a time limit, stdout to
# out.txt, stderr to err.txt; sets $status.
mft_run() {
  local ranks=$1
  shift
  # -q: Open MPI prints no summary of its own when a rank exits non-zero.
  # The limit only catches hangs: it leaves room for a machine four times
  # slower than an idle 2-core one, and busy.
  timeout 300 "$MPIEXEC" -q -n "$ranks" "$MFT" "$@" >out.txt 2>err.txt
  status=$?
  [ "$status" -ne 124 ] || echo "mft $* timed out after 300 s (a hang?); stderr: $(tail -3 err.txt)"
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all checks passed"
}

# gradient_step NAME RANKS ARGS...: one Euler training step of mft train on
# RANKS ranks into NAME.h5, checked by scripts/check_gradient_step.py against
# the independent NumPy gradient; prints the check.
gradient_step() {
  local name=$1 ranks=$2
  shift 2
  mft_run "$ranks" train "$@" --output.file "$name.h5"
  [ "$status" -eq 0 ] || { fail "$name: mft train exit $status"; cat err.txt; return; }
  if "$PYTHON" "$SCRIPTS/check_gradient_step.py" "$name.h5" >check.txt 2>&1; then
    echo "ok: $name"
  else
    fail "$name: the step does not match the independent gradient"
  fi
  cat check.txt
}

# same_runs A.h5 B.h5: every dataset of /particles, /optimizer and /history
# identical byte for byte (wall_time aside), in both files alike.
same_runs() {
  "$PYTHON" - "$1" "$2" <<'PY'
import sys, h5py
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for g in ("particles", "optimizer", "history"):
    assert (g in a) == (g in b), f"/{g} in one file only"
    if g not in a:
        continue
    assert sorted(a[g]) == sorted(b[g]), (g, sorted(a[g]), sorted(b[g]))
    for k in a[g]:
        if k == "wall_time":
            continue
        x, y = a[g][k][...], b[g][k][...]
        assert x.shape == y.shape and x.tobytes() == y.tobytes(), f"/{g}/{k} differs"
print("identical:", sys.argv[1], sys.argv[2], "history steps", list(a["history/step"][:]))
PY
}

# restart_case RANKS STEPS ARGS...: STEPS straight steps into straight.h5,
# then STEPS/2 into part.h5 continued by --restart to STEPS: identical.
restart_case() {
  local ranks=$1 steps=$2
  shift 2
  rm -f straight.h5 part.h5
  mft_run "$ranks" train "$@" --train.steps "$steps" --output.file straight.h5
  [ "$status" -eq 0 ] || { fail "$ranks ranks straight: exit $status"; cat err.txt; }
  mft_run "$ranks" train "$@" --train.steps $((steps / 2)) --output.file part.h5
  [ "$status" -eq 0 ] || { fail "$ranks ranks first half: exit $status"; cat err.txt; }
  mft_run "$ranks" train "$@" --train.steps "$steps" --restart part.h5
  [ "$status" -eq 0 ] || { fail "$ranks ranks restart: exit $status"; cat err.txt; }
  grep -q "restart from part.h5: step $((steps / 2))" out.txt || fail "$ranks ranks: no restart line"
  same_runs straight.h5 part.h5 || fail "$ranks ranks: the restart is not bit-identical"
}

#!/usr/bin/env bash
# What a hostile user found, kept found: no file without a snapshot, no
# trajectory files in the working folder, a read-only working folder works,
# oversized runs are refused before they allocate, one writer per file, no
# .petscrc read unasked, PETSc's own files where they belong and -fp_trap in
# one line.
source "$(dirname "$0")/common.sh"

# kill_run PID NAME: SIGKILL to mpirun and to every rank writing NAME (the
# ranks sit in process groups of their own), then waits until they are gone.
kill_run() {
  kill -9 -- "-$1" 2>/dev/null
  pkill -9 -f -- "--output.file $2" 2>/dev/null
  wait "$1" 2>/dev/null
  for _ in $(seq 600); do pgrep -f -- "--output.file $2" >/dev/null || return 0; sleep 0.1; done
  echo "processes writing $2 outlived SIGKILL:"; pgrep -af -- "--output.file $2"
}

small=(--model.heads 6 --model.slices 3 --data.sequences 12 --data.tokens 6 --train.dtau 0.05)

# readable_and_restartable FILE: h5py reads it and --restart continues it.
readable_and_restartable() {
  "$PYTHON" - "$1" <<'PY' || return 1
import sys, h5py
f = h5py.File(sys.argv[1], "r")
n = int(f["particles"].attrs["complete"])
assert n >= 1 and f["particles/Q"].shape[0] >= n, "no complete snapshot"
print(f"  {sys.argv[1]}: {n} complete snapshot(s), steps {list(f['particles/step'][:n])}")
PY
  local last
  last=$("$PYTHON" -c "import h5py; f = h5py.File('$1', 'r'); print(f['particles/step'][int(f['particles'].attrs['complete']) - 1])")
  mft_run 2 train "${small[@]}" --train.steps $((last + 2)) --restart "$1"
  [ "$status" -eq 0 ] || { echo "  restart: exit $status"; cat err.txt; return 1; }
}

# 1. A kill at any moment within the first second after the file appears
# leaves a readable, restartable file (the file appears with its first
# snapshot); a kill before it appears leaves no file, and the next run on the
# same output starts cleanly.
for delay in 0 0.05 0.2 0.5 1.0; do
  rm -f early.h5
  setsid "$MPIEXEC" -q -n 2 "$MFT" train "${small[@]}" --train.steps 100000 \
    --output.snapshot_every 100000 --output.file early.h5 >early.txt 2>&1 &
  pid=$!
  for _ in $(seq 6000); do [ -e early.h5 ] && break; sleep 0.01; done
  sleep "$delay"
  kill_run "$pid" early.h5
  echo "SIGKILL $delay s after the file appeared:"
  readable_and_restartable early.h5 || fail "kill $delay s after the file appeared: not readable and restartable"
done
for delay in 0 0.3; do
  rm -f late.h5
  setsid "$MPIEXEC" -q -n 2 "$MFT" train "${small[@]}" --output.file late.h5 >late.txt 2>&1 &
  pid=$!
  sleep "$delay"
  kill_run "$pid" late.h5
  if [ -e late.h5 ]; then readable_and_restartable late.h5 || fail "early kill ($delay s) left a bad file"; fi
  mft_run 2 train "${small[@]}" --train.steps 3 --output.file late.h5 --output.overwrite true
  [ "$status" -eq 0 ] || { fail "a run after a kill at $delay s: exit $status"; cat err.txt; }
done
[ -z "$(ls -A | grep partial)" ] || fail "partial files left: $(ls -A | grep partial)"

# 2. The depth trajectory stays in memory: no TS-data-* after train, ntk and
# a SIGKILLed run.
mft_run 2 train "${small[@]}" --train.steps 3 --output.file traj.h5
[ "$status" -eq 0 ] || { fail "train: exit $status"; cat err.txt; }
mft_run 2 ntk --from traj.h5 --output.file traj-ntk.h5
[ "$status" -eq 0 ] || { fail "ntk: exit $status"; cat err.txt; }
setsid "$MPIEXEC" -q -n 2 "$MFT" train "${small[@]}" --train.steps 100000 --output.file killed.h5 >/dev/null 2>&1 &
pid=$!
sleep 3
kill_run "$pid" killed.h5
left=$(ls -d TS-data-* 2>/dev/null)
[ -z "$left" ] || fail "trajectory files in the working folder: $left"

# 3. A read-only working folder (as an unprivileged user when run as root,
# whom permissions do not stop): the output goes elsewhere, nothing is needed here.
ro=$WORK/readonly out=$WORK/writable
mkdir -p "$ro" "$out"
chmod 555 "$ro"
chmod 777 "$out"
as_user=() mft=$MFT
if [ "$(id -u)" -eq 0 ]; then
  # The checkout may sit in a folder only root can enter (mktemp -d): the
  # user runs a copy of the program (it links the library statically).
  chmod 755 "$WORK"
  mft=$WORK/mft
  cp "$MFT" "$mft"
  chmod 755 "$mft"
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp)
fi
(cd "$ro" && timeout 300 "${as_user[@]}" "$MPIEXEC" -q -n 2 "$mft" train "${small[@]}" --train.steps 3 \
  --output.file "$out/ro.h5" >"$out/ro.txt" 2>&1)
status=$?
[ "$status" -eq 0 ] || { fail "run in a read-only working folder: exit $status"; cat "$out/ro.txt"; }
[ -z "$(ls -A "$ro")" ] || fail "files in the read-only folder: $(ls -A "$ro")"

# 4. An oversized run is refused before it allocates (a plausible typo):
# exit 2 naming the key, well inside a generous limit.
mft_run 2 train --data.sequences 2000000
[ "$status" -eq 2 ] && grep -q "data.sequences = 2000000: the run needs" err.txt || {
  fail "oversized run: exit $status"; cat err.txt; }
mft_run 2 forward --model.heads 2147483648
[ "$status" -eq 2 ] && grep -q "model.heads = 2147483648" err.txt || { fail "2^31 heads: exit $status"; cat err.txt; }
grep -q "^memory: about" <(mft_run 2 forward --output.file mem.h5; cat out.txt) || fail "no memory line in the header"

# 5. One writer per file: while a run writes busy.h5, a second run on it is
# refused (with or without overwrite, and as a restart); the first completes
# and its file is intact.
rm -f busy.h5
"$MPIEXEC" -q -n 2 "$MFT" train "${small[@]}" --train.steps 100000 --train.print_every 100000 \
  --output.snapshot_every 50 --output.file busy.h5 >busy.txt 2>&1 &
pid=$!
for _ in $(seq 6000); do [ -e busy.h5 ] && break; sleep 0.01; done
for extra in "" "--output.overwrite true" "--restart busy.h5"; do
  # shellcheck disable=SC2086
  mft_run 2 train "${small[@]}" --train.steps 5 --output.file busy.h5 $extra
  if [ "$status" -ne 2 ] || ! grep -q "output.file = busy.h5\|--restart = busy.h5" err.txt; then
    fail "a second writer ($extra): exit $status"; cat err.txt
  else
    echo "ok: second writer ($extra): $(cat err.txt)"
  fi
done
grep -q "another mft run is writing it" err.txt || fail "the refusal does not say that another run writes the file"
kill -USR1 "$pid"
wait "$pid"
status=$?
[ "$status" -eq 75 ] || { fail "the first run: exit $status"; cat busy.txt; }
"$PYTHON" - <<'PY' || fail "the first run's file is not intact"
import h5py
f = h5py.File("busy.h5", "r")
n = int(f["particles"].attrs["complete"])
steps = list(f["particles/step"][:n])
assert n == f["particles/step"].shape[0] and steps == sorted(steps) and "--train.steps 100000" in f.attrs["command_line"]
assert f["history/step"][-1] == steps[-1]
print("first run intact:", n, "snapshots, last step", steps[-1])
PY

# 6. A .petscrc or petscrc in the working folder is not read: one naming
# the run's own output as a log file, and one that is a FIFO (reading it
# would wait for a writer), change nothing.
rm -f rc.h5 .petscrc petscrc
printf -- '-log_view :%s/rc.h5\n' "$PWD" > .petscrc
mkfifo petscrc
mft_run 2 forward "${small[@]}" --output.file rc.h5
"$PYTHON" -c "import h5py; h5py.File('rc.h5', 'r')['forward']" 2>/dev/null && [ "$status" -eq 0 ] ||
  { fail "a .petscrc in the working folder was read (exit $status; rc.h5 is not the forward's HDF5 file)"; cat err.txt; }
grep -q "Performance Summary" out.txt && fail "-log_view of the .petscrc ran"
rm -f .petscrc petscrc rc.h5
# PETSC_OPTIONS is read (mft's users set it), under the same rules: an
# options file that includes itself, or a log onto the run's output, is one
# line and nothing written.
printf -- '-options_file self.opts\n' > self.opts
for options in "-options_file self.opts" "-log_view :$PWD/env.h5"; do
  PETSC_OPTIONS="$options" mft_run 2 forward "${small[@]}" --output.file env.h5
  if [ "$status" -ne 2 ] || [ "$(wc -l <err.txt)" -ne 1 ] || [ -e env.h5 ] ||
     ! grep -q "^mft: error: -\(options_file\|log_view\) = " err.txt; then
    fail "PETSC_OPTIONS=$options: exit $status, env.h5 $([ -e env.h5 ] && echo written || echo absent)"; cat err.txt
  else
    echo "ok: PETSC_OPTIONS=$options: $(cat err.txt)"
  fi
done
rm -f self.opts env.h5

# 7. PETSc's files, where nothing of the run is, are written as PETSc
# writes them (bad_inputs.py refuses them on every file of a run), and
# -fp_trap stops the run in one line of mft's, not PETSc's error stack.
mft_run 2 train "${small[@]}" --train.steps 2 --output.file pv.h5 -log_view :pv_log.txt \
  -depth_ts_monitor ascii:pv_mon.txt -history pv_hist.txt -depth_ts_view binary:pv_view.bin
[ "$status" -eq 0 ] || { fail "a run with PETSc's log, monitor, history and viewer files: exit $status"; cat err.txt; }
# -log_trace writes nothing beside -log_view (PETSc logs to one handler): a run of its own.
mft_run 2 forward "${small[@]}" --output.file pv2.h5 -log_trace pv_trace -info pv_info
[ "$status" -eq 0 ] || { fail "a run with PETSc's trace and info files: exit $status"; cat err.txt; }
for f in pv_log.txt pv_mon.txt pv_hist.txt pv_trace.0 pv_trace.1 pv_info.0 pv_info.1 pv_view.bin pv_view.bin.info; do
  [ -s "$f" ] || fail "PETSc's file $f is missing or empty"
done
grep -q "Performance Summary" pv_log.txt || fail "-log_view :pv_log.txt holds no performance summary"
grep -q "TS dt" pv_mon.txt || fail "-depth_ts_monitor ascii:pv_mon.txt holds no step: $(head -2 pv_mon.txt)"
"$PYTHON" -c "import h5py; h5py.File('pv.h5', 'r')['particles/Q']" || fail "pv.h5 is not the run's file"
rm -f pv.h5 pv2.h5 pv_*
for ranks in 1 2; do
  mft_run "$ranks" train "${small[@]}" --train.steps 2 --init.sigma_v 1e300 --output.file fp.h5 -fp_trap
  if [ "$status" -ne 4 ] || [ "$(grep -c "^mft: error: -fp_trap = '': a floating-point overflow trapped on rank" err.txt)" -lt 1 ] ||
     grep -q "PETSC ERROR" err.txt || { [ "$ranks" -eq 1 ] && [ "$(wc -l <err.txt)" -ne 1 ]; }; then
    fail "-fp_trap on $ranks rank(s): exit $status, stderr:"; cat err.txt
  else
    echo "ok: -fp_trap on $ranks rank(s): $(head -1 err.txt)"
  fi
  rm -f fp.h5 .fp.h5.partial
done
finish

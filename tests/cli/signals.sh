#!/usr/bin/env bash
# SIGTERM to mpirun during a 2-rank run: every rank finishes its step, writes
# a snapshot and exits (mpirun itself reports Open MPI's 1, the ranks 75); SIGUSR1 is forwarded by mpirun, which then exits 75 like the
# ranks; train.max_walltime stops the same way. The file's last snapshot is
# its last step, and --restart continues it.
source "$(dirname "$0")/common.sh"
# mpirun passes SIGTERM on after this many seconds and kills the ranks as many
# seconds later: room for a step and a snapshot on a busy machine.
export OMPI_MCA_odls_base_sigkill_timeout=10

run=(--model.heads 5 --model.slices 3 --data.sequences 10 --data.tokens 6 --train.dtau 0.05
     --train.print_every 50 --output.snapshot_every 100000)

last_is_snapshot() { # FILE: the last history step has a snapshot
  "$PYTHON" - "$1" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
h, p = f["history/step"][:], f["particles/step"][:]
print(f"history up to step {h[-1]}, snapshots {list(p)}")
assert h[-1] == p[-1] and h[-1] > 0 and f["particles"].attrs["complete"] == len(p)
PY
}

# The command a stop prints continues the run, with nothing added (the keys
# come from the file): here to the run's own 150 steps. It starts with the
# launcher and rank count of the stopped run, so that the continued run gives
# the uninterrupted one's particles bit for bit; its first row shows the
# held-out risk the file holds for that step. The signal comes after step 5
# of steps that take a good fraction of a second.
rm -f printed.h5 whole.h5
printed_run=(--model.heads 32 --model.slices 8 --data.sequences 32 --data.test_sequences 8 --train.dtau 0.05
             --train.print_every 1 --train.steps 150)
rm -f printed.jsonl
"$MPIEXEC" -q -n 2 "$MFT" train "${printed_run[@]}" --output.file printed.h5 --output.log printed.jsonl >printed.txt 2>&1 &
pid=$!
for _ in $(seq 1200); do grep -qE "^ +5 " printed.txt && break; sleep 0.1; done
kill -USR1 "$pid"
wait "$pid"
status=$?
printed=$(grep -o "continue with .*" printed.txt | sed 's/^continue with //')
expected="$(basename "$MPIEXEC") -n 2 $MFT train --restart printed.h5"
if [ "$status" -ne 75 ] || [ "$printed" != "$expected" ]; then
  fail "SIGUSR1 before step 150: exit $status, printed '$printed', expected '$expected'"; cat printed.txt
else
  # As a user runs it: the printed line, word for word, through a shell
  # (more ranks than cores allowed, as for every test here).
  OMPI_MCA_rmaps_base_oversubscribe=1 timeout 300 bash -c "$printed" >out.txt 2>err.txt
  status=$?
  [ "$status" -eq 0 ] || { fail "the printed command ($printed): exit $status"; cat err.txt; }
  grep -q "restart from printed.h5: step" out.txt && grep -qE "^ +150 " out.txt ||
    { fail "the printed command did not continue to step 150"; cat out.txt; }
  first=$(grep -A2 "restart from printed.h5" out.txt | tail -1)
  case "$first" in
    *nan*|"") fail "the first row after the restart lacks a measure: '$first'"; cat out.txt ;;
  esac
  "$PYTHON" - printed.jsonl <<'PY' || fail "the log's first row after the restart lacks test_risk"
import json, math, sys
events = [json.loads(line) for line in open(sys.argv[1])]
starts = [i for i, e in enumerate(events) if e.get("event") == "start"]
assert len(starts) == 2, f"{len(starts)} start events"
row = next(e for e in events[starts[1]:] if e.get("event") == "row")
assert math.isfinite(row.get("test_risk", math.nan)), row
print("log: first row after the restart", row)
PY
  echo "continued with '$printed': $(grep 'restart from' out.txt); first row: $first"
  mft_run 2 train "${printed_run[@]}" --output.file whole.h5
  [ "$status" -eq 0 ] || { fail "the uninterrupted run: exit $status"; cat err.txt; }
  # The stop added a snapshot; the last one and every history row agree.
  "$PYTHON" - printed.h5 whole.h5 >same.txt 2>&1 <<'PY' ||
import sys, h5py
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
assert a["particles/step"][-1] == b["particles/step"][-1] == 150
for k in a["particles"]:
    assert a["particles"][k][-1].tobytes() == b["particles"][k][-1].tobytes(), f"/particles/{k} differs at step 150"
for k in a["history"]:
    if k != "wall_time":
        assert a["history"][k][...].tobytes() == b["history"][k][...].tobytes(), f"/history/{k} differs"
print("stopped and continued = uninterrupted, bit for bit: particles at step 150 and", len(a["history/step"]), "rows")
PY
    { fail "stopped and continued as printed differs from the uninterrupted run"; cat same.txt; }
  cat same.txt
fi

for sig in TERM USR1; do
  rm -f "$sig.h5"
  "$MPIEXEC" -q -n 2 "$MFT" train "${run[@]}" --train.steps 100000 --output.file "$sig.h5" >"$sig.txt" 2>&1 &
  pid=$!
  for _ in $(seq 1200); do grep -qE "^ +100 " "$sig.txt" && break; sleep 0.1; done
  start=$(date +%s)
  kill "-$sig" "$pid"
  wait "$pid"
  status=$?
  took=$(($(date +%s) - start))
  echo "SIG$sig: mpirun exit $status after ${took} s"
  [ "$took" -le 200 ] || fail "SIG$sig: took $took s (a rank hangs?)"
  if [ "$sig" = USR1 ]; then [ "$status" -eq 75 ] || fail "SIGUSR1: exit $status, expected 75"; fi
  [ "$status" -ne 0 ] || fail "SIG$sig: exit 0"
  # mpirun may stop forwarding output once it shuts the job down (SIGTERM).
  if [ "$sig" = USR1 ]; then
    grep -q "stopped by SIG$sig after step" "$sig.txt" || { fail "SIG$sig: no stop line"; cat "$sig.txt"; }
  fi
  last_is_snapshot "$sig.h5" || fail "SIG$sig: the last step has no snapshot"
done

mft_run 2 train "${run[@]}" --train.steps 100000 --train.max_walltime 2 --output.file wall.h5
[ "$status" -eq 75 ] || { fail "max_walltime: exit $status"; cat err.txt; }
grep -q "stopped by train.max_walltime" out.txt || fail "max_walltime: no stop line"
last_is_snapshot wall.h5 || fail "max_walltime: the last step has no snapshot"
step=$("$PYTHON" -c "import h5py; print(h5py.File('wall.h5', 'r')['history/step'][-1])")
[ "$("$PYTHON" -c "import h5py; print(h5py.File('wall.h5', 'r')['history'].attrs['end'])")" = stopped ] ||
  fail "max_walltime: /history.end is not stopped"
mft_run 2 train "${run[@]}" --train.steps $((step + 3)) --restart wall.h5
[ "$status" -eq 0 ] || { fail "restart after max_walltime: exit $status"; cat err.txt; }
"$PYTHON" -c "
import h5py
f = h5py.File('wall.h5', 'r')
assert f['history/step'][-1] == $step + 3, f['history/step'][-1]
assert f['history'].attrs['end'] == 'done', f['history'].attrs['end']
" || fail "the restart did not continue to step $((step + 3))"
finish

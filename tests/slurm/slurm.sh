#!/usr/bin/env bash
# mft's batch scripts on a real (one-node) Slurm: a training job signalled
# before its time limit snapshots, is requeued, continues with --restart and
# ends with the particles of the same run done straight; a 4-task sweep and
# its collect job; a job with invalid input fails once and is not requeued.
source "$(dirname "$0")/../cli/common.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CLUSTER="$WORK/cluster"
export MFT_SLURMCTLD_PORT=$((17000 + RANDOM % 2000)) MFT_SLURMD_PORT=$((19000 + RANDOM % 2000))
trap '"$ROOT/scripts/slurm/local-cluster.sh" down "$CLUSTER" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
"$ROOT/scripts/slurm/local-cluster.sh" up "$CLUSTER" || { echo "FAIL: no cluster"; exit 1; }
export SLURM_CONF=$CLUSTER/slurm.conf
export MFT_ROOT=$ROOT MFT_BUILD=$(dirname "$(dirname "$MFT")")

# wait_done JOB SECONDS: until the job has left the queue; requeued jobs are
# released at once instead of after Slurm's two-minute requeue delay.
wait_done() {
  for _ in $(seq "$2"); do
    state=$(squeue -h -j "$1" -o "%T %r" 2>/dev/null)
    [ -z "$state" ] && return 0
    case "$state" in *BeginTime*) scontrol update JobId="$1" StartTime=now >/dev/null 2>&1 ;; esac
    sleep 1
  done
  echo "job $1 still queued: $state"
  return 1
}
job_field() { scontrol show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

# 1. Signal, snapshot, requeue, restart, completion: about 30 s of steps,
# the warning signal 10 s into each one-minute start, so the run needs a
# few starts whatever the speed of the machine.
run=(--model.heads 8 --model.slices 4 --data.sequences 32 --data.tokens 8 --train.dtau 0.05
     --train.steps 5000 --train.print_every 1000 --output.snapshot_every 1000)
job=$(sbatch --parsable -n 2 --time=00:01:00 --signal=B:USR1@50 --export=ALL,MFT_OUTPUT=runs/req.h5 \
  "$ROOT/scripts/slurm/train.sbatch" "${run[@]}")
wait_done "$job" 400 || fail "training job did not finish"
log=mft-train-$job.log
cat "$log"
grep -q "requeueing job $job" "$log" || fail "the job was not requeued"
grep -q "continuing runs/req.h5" "$log" || fail "the requeued job did not restart"
grep -q "mft-job: done" "$log" || fail "the job did not complete"
[ "$(job_field "$job" Restarts)" -ge 1 ] || fail "Restarts is $(job_field "$job" Restarts)"
[ "$(job_field "$job" JobState)" = COMPLETED ] || fail "job state $(job_field "$job" JobState)"
mft_run 2 train "${run[@]}" --output.file straight.h5
[ "$status" -eq 0 ] || { fail "straight run: exit $status"; cat err.txt; }
"$PYTHON" - <<'PY' || fail "the requeued run differs from the straight one"
import h5py, numpy as np
a, b = h5py.File("straight.h5", "r"), h5py.File("runs/req.h5", "r")
assert a["particles/step"][-1] == b["particles/step"][-1] == 5000
for s in ("Q", "K", "V"):
    assert a["particles/" + s][-1].tobytes() == b["particles/" + s][-1].tobytes(), s
for h in ("step", "tau", "risk", "objective", "grad_norm"):
    assert a["history/" + h][...].tobytes() == b["history/" + h][...].tobytes(), h
print("requeued run = straight run, bit for bit; snapshots", list(b["particles/step"][:]))
PY

# 2. A 4-task sweep and the collect job.
out=$("$ROOT/scripts/slurm/submit_sweep.sh" "$ROOT/data/sweeps/heads-slices.csv")
echo "$out"
array=$(echo "$out" | sed -n 's/.*array job \([0-9]*\).*/\1/p')
collect=$(echo "$out" | sed -n 's/.*collect job \([0-9]*\).*/\1/p')
wait_done "$collect" 300 || fail "the sweep did not finish"
cat mft-collect-"$collect".log
ls runs/sweep-"$array"-*.h5 | wc -l | grep -qx 4 || fail "not four sweep files"
[ -s runs/sweep-"$array".png ] || fail "no sweep plot"
"$PYTHON" - "$array" <<'PY' || fail "the collected table does not match the files"
import csv, sys, h5py
array = sys.argv[1]
rows = list(csv.DictReader(open(f"runs/sweep-{array}.csv")))
assert len(rows) == 4, rows
for r in rows:
    h = h5py.File("runs/" + r["file"], "r")["history"]
    assert float(r["R"]) == h["risk"][-1] and int(r["steps"]) == h["step"][-1] == 60, r
assert sorted((int(r["M"]), int(r["L"])) for r in rows) == [(4, 2), (4, 8), (16, 2), (16, 8)]
print("collected:", [(r["M"], r["L"], r["R"]) for r in rows])
PY

# 3. Invalid input: fails once, mft's error in the log, not requeued.
job=$(sbatch --parsable -n 2 --time=00:01:00 --export=ALL,MFT_OUTPUT=runs/bad.h5 \
  "$ROOT/scripts/slurm/train.sbatch" --model.heads 0)
wait_done "$job" 60 || fail "the invalid job did not end"
cat mft-train-"$job".log
grep -q "mft: error: model.heads = 0" mft-train-"$job".log || fail "no one-line error in the log"
[ "$(job_field "$job" JobState)" = FAILED ] || fail "job state $(job_field "$job" JobState)"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "the invalid job was requeued"
[ ! -e runs/bad.h5 ] || fail "the invalid job left a file"
finish

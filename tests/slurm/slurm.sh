#!/usr/bin/env bash
# mft's batch scripts on a real (one-node) Slurm: a training job signalled
# before its time limit snapshots, is requeued, continues with --restart and
# ends with the particles of the same run done straight; a 4-task sweep with
# a base configuration, shared options and site options, and its collect
# job; a job with invalid input fails once and is not requeued;
# the scaling series on 1, 2 and 4 ranks (2 x 2 grid) with its table and plot.
#
# Every wait is for a job state; the deadlines leave room for a machine four
# times slower than an idle 2-core one, and busy. A failed check prints the
# job (scontrol), the ends of the daemons' logs and of the job's log.
source "$(dirname "$0")/../cli/common.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CLUSTER="$WORK/cluster"
export MFT_SLURMCTLD_PORT=$((17000 + RANDOM % 2000)) MFT_SLURMD_PORT=$((19000 + RANDOM % 2000))
trap '"$ROOT/scripts/slurm/local-cluster.sh" down "$CLUSTER" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
"$ROOT/scripts/slurm/local-cluster.sh" up "$CLUSTER" || { echo "FAIL: no cluster"; exit 1; }
export SLURM_CONF=$CLUSTER/slurm.conf
export MFT_ROOT=$ROOT MFT_BUILD=$(dirname "$(dirname "$MFT")")

# job_info JOB: sets state, reason and restarts from one `scontrol show job`.
job_info() {
  local text
  text=$(scontrol show job "$1" 2>/dev/null | tr ' ' '\n')
  state=$(sed -n 's/^JobState=//p' <<<"$text" | head -1)
  reason=$(sed -n 's/^Reason=//p' <<<"$text" | head -1)
  restarts=$(sed -n 's/^Restarts=//p' <<<"$text" | head -1)
}

# wait_for JOB SECONDS CONDITION: polls job_info until CONDITION (a shell
# test on $state, $reason, $restarts) holds; 1 when the job ended, or sits
# held, on a dependency that can never be met or for a node that is down or
# drained, or the deadline passed.
wait_for() {
  local deadline=$((SECONDS + $2))
  while [ "$SECONDS" -lt "$deadline" ]; do
    job_info "$1"
    eval "$3" && return 0
    case "$state" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | PREEMPTED | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | SPECIAL_EXIT)
      echo "job $1 ended: $state ($reason)"; return 1 ;;
    esac
    case "$reason" in
    *[Hh]eld* | DependencyNeverSatisfied | ReqNodeNotAvail* | *DOWN* | *DRAIN*)
      echo "job $1 is stuck: $state ($reason)"; return 1 ;;
    esac
    sleep 1
  done
  echo "job $1 after $2 s: ${state:-gone} (${reason:-})"
  return 1
}
ended='case $state in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|PREEMPTED|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE) true ;; *) false ;; esac'

# explain JOB [LOG ...]: what explains a failed check about JOB.
explain() {
  local job=$1 log
  shift
  echo "---- scontrol show job $job"
  scontrol show job "$job" 2>&1
  for log in "$CLUSTER/log/slurmctld.log" "$CLUSTER/log/slurmd.log" "$@"; do
    echo "---- $log (last 40 lines)"
    tail -n 40 "$log" 2>&1
  done
  echo "----"
}

# 1. Signal, snapshot, requeue, restart, completion. Slurm sends the warning
# signal on its time-limit pass (every 30 s), 10 to 40 s into the job: the
# run is given far more steps than any machine does by then, so it is
# always stopped by the signal. While the requeued job is held, its
# configuration file (read again at each start; train.steps may change on
# a restart) is set to end 200 steps past the snapshot and the time limit
# is lifted, so the second start finishes the run, however slow the machine.
cat >run.ini <<'INI'
[model]
heads = 8
slices = 4
[data]
sequences = 32
tokens = 8
[train]
dtau = 0.05
steps = 100000000
print_every = 200
[output]
snapshot_every = 1000
INI
job=$(sbatch --parsable -n 2 --time=00:01:00 --signal=B:USR1@50 \
  --export=ALL,MFT_CONFIG="$WORK/run.ini",MFT_OUTPUT=runs/req.h5 "$ROOT/scripts/slurm/train.sbatch")
log=mft-train-$job.log
ok=1
steps=
if ! wait_for "$job" 300 '[ "${restarts:-0}" -ge 1 ] && [ "$state" = PENDING ]'; then
  fail "the training job was not requeued"
  ok=0
else
  steps=$("$PYTHON" -c 'import h5py; print(h5py.File("runs/req.h5", "r")["particles/step"][-1] + 200)')
  if [ -z "$steps" ]; then
    fail "no snapshot in runs/req.h5 after the requeue"
    ok=0
  else
    sed -i "s/^steps = .*/steps = $steps/" run.ini
    scontrol update JobId="$job" TimeLimit=30 || { fail "could not lift the time limit of job $job"; ok=0; }
    # Still held after both changes: its next start reads them.
    job_info "$job"
    [ "$state" = PENDING ] || { fail "job $job started before its configuration was changed"; ok=0; }
  fi
fi
if [ "$ok" -eq 1 ] && ! wait_for "$job" 480 "$ended"; then
  fail "the training job did not end"
  ok=0
fi
if [ "$ok" -eq 1 ]; then
  job_info "$job"
  grep -q "requeueing job $job" "$log" || { fail "the job was not requeued"; ok=0; }
  grep -q "continuing runs/req.h5" "$log" || { fail "the requeued job did not restart"; ok=0; }
  grep -q "mft-job: done" "$log" || { fail "the job did not complete"; ok=0; }
  [ "${restarts:-0}" -ge 1 ] || { fail "Restarts is ${restarts:-unknown}"; ok=0; }
  [ "$state" = COMPLETED ] || { fail "job state ${state:-unknown} (${reason:-})"; ok=0; }
fi
if [ "$ok" -eq 0 ]; then
  explain "$job" "$log"
  scancel "$job" 2>/dev/null
else
  cat "$log"
  # The same run straight, for the comparison (under a minute here).
  timeout 300 "$MPIEXEC" -q -n 2 "$MFT" train --config run.ini --output.file straight.h5 >straight.out 2>&1
  status=$?
  if [ "$status" -ne 0 ]; then
    fail "straight run: exit $status$([ "$status" -eq 124 ] && echo ' (timed out)')"
    tail -n 40 straight.out
  else
    "$PYTHON" - "$steps" <<'PY' || fail "the requeued run differs from the straight one"
import sys, h5py
steps = int(sys.argv[1])
a, b = h5py.File("straight.h5", "r"), h5py.File("runs/req.h5", "r")
assert a["particles/step"][-1] == b["particles/step"][-1] == steps
for s in ("Q", "K", "V"):
    assert a["particles/" + s][-1].tobytes() == b["particles/" + s][-1].tobytes(), s
for h in ("step", "tau", "risk", "objective", "grad_norm"):
    assert a["history/" + h][...].tobytes() == b["history/" + h][...].tobytes(), h
print("requeued run = straight run, bit for bit; snapshots", list(b["particles/step"][:]))
PY
  fi
fi

# 2. A 4-task sweep and the collect job (afterany on the array), with a
# base configuration and options for every row, a site options file read
# for both jobs, and a placement option given for the array that the
# collect job gets too.
printf '[data]\nsequences = 24\n' >base.ini
printf '# the site\n--comment=mft-site\n' >site.options
out=$(MFT_SLURM_OPTIONS=$WORK/site.options "$ROOT/scripts/slurm/submit_sweep.sh" \
  "$ROOT/examples/sweep-heads-slices.csv" --base base.ini --args "--data.tokens 6" -A mftproj)
echo "$out"
array=$(echo "$out" | sed -n 's/.*array job \([0-9]*\).*/\1/p')
collect=$(echo "$out" | sed -n 's/.*collect job \([0-9]*\).*/\1/p')
if [ -z "$array" ] || [ -z "$collect" ]; then
  fail "the sweep was not submitted"
elif ! wait_for "$collect" 600 "$ended" || [ "$state" != COMPLETED ]; then
  fail "the sweep did not complete: collect job ${state:-unknown} (${reason:-})"
  explain "$array" mft-sweep-"$array"-*.log
  explain "$collect" mft-collect-"$collect".log
else
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
assert all(r["status"] == "complete" and r["model.heads"] == r["M"] for r in rows), rows
for r in rows:  # the base and the shared options reached every task
    cfg = h5py.File("runs/" + r["file"], "r")["config"].attrs
    assert int(cfg["data.sequences"]) == 24 and int(cfg["data.tokens"]) == 6, dict(cfg)
print("collected:", [(r["M"], r["L"], r["R"]) for r in rows])
PY
  for job in "$array" "$collect"; do
    scontrol show job "$job" | grep -q "Comment=mft-site" || fail "job $job lacks the site's --comment"
  done
  scontrol show job "$collect" | grep -q "Account=mftproj" ||
    fail "the collect job lacks the --account given for the array"
fi

# 3. Invalid input: fails once, mft's error in the log, not requeued.
job=$(sbatch --parsable -n 2 --time=00:01:00 --export=ALL,MFT_OUTPUT=runs/bad.h5 \
  "$ROOT/scripts/slurm/train.sbatch" --model.heads 0)
log=mft-train-$job.log
wait_for "$job" 180 "$ended" || fail "the invalid job did not end"
cat "$log"
job_info "$job"
ok=1
grep -q "mft: error: model.heads = 0" "$log" || { fail "no one-line error in the log"; ok=0; }
[ "$state" = FAILED ] || { fail "job state ${state:-unknown}"; ok=0; }
[ "${restarts:-}" = 0 ] || { fail "the invalid job was requeued"; ok=0; }
[ ! -e runs/bad.h5 ] || { fail "the invalid job left a file"; ok=0; }
[ "$ok" -eq 1 ] || explain "$job" "$log"

# 4. The scaling series: 1, 2 and 4 ranks (the last oversubscribed, on a
# 2 x 2 grid) of a tiny model, strong and weak; the table and the plot.
job=$(sbatch --parsable -n 2 --time=00:10:00 \
  --export=ALL,MFT_SCALING_RANKS="1 2 4",MFT_SCALING_HEAD_RANKS=2,MFT_SCALING_ARGS="--N 8 --n 4 --d 4 --dh 4 --M 4 --L 2 --repeat 1 --train-steps 1" \
  "$ROOT/scripts/slurm/scaling.sbatch")
log=mft-scaling-$job.log
if ! wait_for "$job" 600 "$ended" || [ "$state" != COMPLETED ]; then
  fail "the scaling job did not complete: ${state:-unknown} (${reason:-})"
  explain "$job" "$log"
else
  cat "$log"
  [ -s runs/scaling-"$job".png ] || fail "no scaling plot"
  "$PYTHON" - "$job" <<'PY' || fail "the scaling table is not the series"
import csv, sys
rows = list(csv.DictReader(open(f"runs/scaling-{sys.argv[1]}.csv")))
got = sorted((r["series"], int(r["ranks"]), int(r["groups"]), int(r["N"])) for r in rows)
assert got == [("strong", 1, 1, 8), ("strong", 2, 1, 8), ("strong", 4, 2, 8),
               ("weak", 1, 1, 8), ("weak", 2, 1, 16), ("weak", 4, 2, 32)], got
assert all(float(r["step_s"]) > 0 and 0 < float(r["efficiency"]) for r in rows), rows
PY
fi
finish

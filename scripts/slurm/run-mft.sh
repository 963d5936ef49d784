#!/usr/bin/env bash
# The body of mft's batch scripts: runs `mft train` on the job's tasks so
# that Slurm's warning signal ends in a snapshot and a requeue.
#
#   run-mft.sh OUTPUT [mft train options ...]
#
# Continues OUTPUT with --restart when it exists (the requeued start). On
# SIGUSR1 (#SBATCH --signal=B:USR1@SECONDS) it asks mft to stop; mft ends its
# step, writes a snapshot and exits 75, and the job is requeued. Exit 0 when
# the run is done or requeued; 75 when the snapshot is complete but Slurm
# refused the requeue; mft's own code when it failed (not requeued).
# MFT_LAUNCH=mpirun (default; $MPIEXEC when set) or srun (srun --mpi=pmix;
# needs Slurm with PMIx).
set -uo pipefail
# Trapped before anything else: bash's default for SIGUSR1 is to exit, which
# would end the job with mft still running and no word in the log.
# mpirun (or srun) and mft die of a SIGUSR1 that comes before they handle
# it, so one that comes in mft's first seconds is passed on once they are up.
settle=10
child=
launched=0
stop_asked=0
pending=0
forward() {
  if [ "$pending" -eq 1 ] && [ -n "$child" ] && [ $((SECONDS - launched)) -ge "$settle" ]; then
    kill -USR1 "$child" 2>/dev/null
    pending=0
  fi
}
on_usr1() {
  echo "mft-job: SIGUSR1 from Slurm: asking mft to stop"
  stop_asked=1
  pending=1
  forward
}
trap on_usr1 USR1

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../env.sh"
[ $# -ge 1 ] || { echo "usage: $0 OUTPUT [mft train options ...]" >&2; exit 2; }
output=$1
shift

# Each start of a requeued job appends to the same log: say which one this is.
restarts=${SLURM_RESTART_COUNT:-0}
[ -n "${SLURM_JOB_ID:-}" ] &&
  echo "mft-job: job $SLURM_JOB_ID, start $((restarts + 1)), on $(hostname -s) at $(date '+%F %T')"

mkdir -p "$(dirname "$output")"
args=(train --output.file "$output")
if [ -f "$output" ]; then
  echo "mft-job: continuing $output (restart $restarts)"
  args+=(--restart "$output")
elif [ "$restarts" -gt 0 ]; then
  # mft publishes its file at the first snapshot: an earlier start ended before it.
  echo "mft-job: restart $restarts finds no $output (no earlier start wrote a snapshot): starting the run"
fi
args+=("$@")

ranks=${SLURM_NTASKS:-2}
case "${MFT_LAUNCH:-mpirun}" in
srun) launch=(srun --mpi=pmix -n "$ranks") ;;
mpirun) launch=("${MPIEXEC:-mpirun}" -q -n "$ranks") ;;
*) echo "mft-job: MFT_LAUNCH must be mpirun or srun, not ${MFT_LAUNCH}" >&2; exit 2 ;;
esac

if [ "$stop_asked" -eq 1 ]; then
  echo "mft-job: Slurm's warning signal came before mft started: the time limit is shorter than the --signal lead time; not started" >&2
  exit 1
fi
"${launch[@]}" "$MFT_PROGRAM" "${args[@]}" &
child=$!
launched=$SECONDS
# mpirun and srun forward SIGUSR1 to the ranks.
while :; do
  if [ "$pending" -eq 1 ]; then
    sleep 1
    forward
    kill -0 "$child" 2>/dev/null && continue
  fi
  wait "$child"
  status=$?
  kill -0 "$child" 2>/dev/null || break # wait returned for the trap: wait again
done

# requeue: asks Slurm to requeue this job; exits.
requeue() {
  local job=$SLURM_JOB_ID out state attempt
  # Said before the request: once Slurm takes it, it ends this start at
  # once (Slurm's own "CANCELLED ... DUE TO JOB REQUEUE" line may follow).
  echo "mft-job: stopped with a complete snapshot; requeueing job $job"
  echo "mft-job: Slurm starts it again after its requeue hold (AuthInfo cred_expire + 1 s; about 2 minutes by default)." \
    "Released before that (scontrol release or update StartTime), slurmd can refuse the start" \
    "(\"Job credential revoked\" in slurmctld's log) and the job ends FAILED with no further line here."
  for attempt in 1 2 3; do
    out=$(scontrol requeue "$job" 2>&1) && exit 0
    # A reply lost under load: the request may have been taken all the same.
    state=$(squeue -h -j "$job" -o %T 2>/dev/null)
    case "$state" in PENDING | REQUEUED | COMPLETING) exit 0 ;; esac
    echo "mft-job: scontrol requeue $job failed (try $attempt of 3): $out" >&2
    [ "$attempt" -lt 3 ] && sleep 5
  done
  echo "mft-job: job $job not requeued; $output holds a complete snapshot: continue it with --restart" \
    "(e.g. sbatch --export=ALL,MFT_OUTPUT=$output scripts/slurm/train.sbatch with the same options)" >&2
  exit 75
}

case $status in
0) echo "mft-job: done" ;;
75)
  [ -n "${SLURM_JOB_ID:-}" ] && requeue
  echo "mft-job: stopped with a complete snapshot; run again to continue"
  status=0
  ;;
*)
  why="its error is above"
  [ "$status" -gt 128 ] && why="killed by signal $((status - 128)); see the job's state and slurmd's log"
  echo "mft-job: mft failed with exit code $status ($why); not requeued" >&2
  ;;
esac
exit "$status"

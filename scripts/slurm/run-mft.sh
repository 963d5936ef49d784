#!/usr/bin/env bash
# The body of mft's batch scripts: runs `mft train` on the job's tasks so
# that Slurm's warning signal ends in a snapshot and a requeue.
#
#   run-mft.sh OUTPUT [mft train options ...]
#
# Continues OUTPUT with --restart when it exists (the requeued start). On
# SIGUSR1 (#SBATCH --signal=B:USR1@SECONDS) it asks mft to stop; mft ends its
# step, writes a snapshot and exits 75, and the job is requeued. Exit 0 when
# the run is done or requeued; mft's own code when it failed (not requeued).
# MFT_LAUNCH=mpirun (default) or srun (srun --mpi=pmix; needs Slurm with PMIx).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../env.sh"
[ $# -ge 1 ] || { echo "usage: $0 OUTPUT [mft train options ...]" >&2; exit 2; }
output=$1
shift
mkdir -p "$(dirname "$output")"
args=(train --output.file "$output")
if [ -f "$output" ]; then
  echo "mft-job: continuing $output (restart ${SLURM_RESTART_COUNT:-0})"
  args+=(--restart "$output")
fi
args+=("$@")

ranks=${SLURM_NTASKS:-2}
case "${MFT_LAUNCH:-mpirun}" in
srun) launch=(srun --mpi=pmix -n "$ranks") ;;
mpirun) launch=(mpirun -q -n "$ranks") ;;
*) echo "mft-job: MFT_LAUNCH must be mpirun or srun, not ${MFT_LAUNCH}" >&2; exit 2 ;;
esac

"${launch[@]}" "$MFT_BUILD/apps/mft" "${args[@]}" &
child=$!
# Slurm signals this shell (B:); mpirun and srun forward SIGUSR1 to the ranks.
trap 'echo "mft-job: SIGUSR1 from Slurm: asking mft to stop"; kill -USR1 "$child" 2>/dev/null' USR1
while :; do
  wait "$child"
  status=$?
  kill -0 "$child" 2>/dev/null || break # wait returned for the trap: wait again
done

case $status in
0) echo "mft-job: done" ;;
75)
  if [ -n "${SLURM_JOB_ID:-}" ]; then
    echo "mft-job: stopped with a complete snapshot; requeueing job $SLURM_JOB_ID"
    scontrol requeue "$SLURM_JOB_ID"
  else
    echo "mft-job: stopped with a complete snapshot; run again to continue"
  fi
  status=0
  ;;
*) echo "mft-job: mft failed with exit code $status (its error is above); not requeued" >&2 ;;
esac
exit "$status"

#!/usr/bin/env bash
# Submits a sweep: the array job over TABLE and the collect job after it.
#   scripts/slurm/submit_sweep.sh examples/sweep-heads-slices.csv [sbatch options ...]
# Prints the two job ids; results land in runs/sweep-ARRAYJOB-*.h5,
# runs/sweep-ARRAYJOB.csv and runs/sweep-ARRAYJOB.png.
# The table is checked here, before anything is submitted (exit 2 and one
# line naming the table, the line and the column): every row, and every
# header key against the keys of the mft the tasks run ($MFT_PROGRAM, as
# run-mft.sh finds it: `mft --keys`), so a misspelt key fails now and not
# in every task of the array. The collect job runs after the array however
# its tasks end (afterany) and reports the tasks that failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
table=${1:?usage: $0 TABLE [sbatch options ...]}
shift
# Only a regular file: a FIFO would block the reader, a folder or device is no table.
[ -e "$table" ] || { echo "$0: no table $table" >&2; exit 2; }
[ -f "$table" ] || { echo "$0: $table is not a regular file (a sweep table is a CSV file)" >&2; exit 2; }
# The rows of the table, parsed as CSV, its keys checked against mft's (a
# malformed table or an unknown key stops here, exit 2). env.sh is sourced
# in this subshell only: it sets MFT_PROGRAM and MPI's environment for mft
# --keys, and its choices for this machine (OPENBLAS_CORETYPE) must not
# reach the jobs, which sbatch starts with the environment of this script.
rows=$(
  set +e # env.sh is written for scripts without -e
  source "$here/../env.sh"
  mft=$MFT_PROGRAM
  [ -x "$mft" ] || { echo "$0: no mft program at $mft (build it, or set MFT_BUILD)" >&2; exit 2; }
  PYTHONPATH="$MFT_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}" "${MFT_PYTHON:-python3}" -m mft.sweep check "$table" --mft "$mft"
)
[ "$rows" -ge 1 ] || { echo "$0: $table has a header and no rows" >&2; exit 2; }
array=$(sbatch --parsable --array=0-$((rows - 1)) "$@" "$here/sweep.sbatch" "$table")
array=${array%%;*}
collect=$(sbatch --parsable --dependency=afterany:"$array" "$here/collect.sbatch" "$array" "$rows")
collect=${collect%%;*}
echo "sweep: array job $array ($rows runs), collect job $collect"

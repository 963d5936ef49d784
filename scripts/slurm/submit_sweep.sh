#!/usr/bin/env bash
# Submits a sweep: the array job over TABLE and the collect job after it.
#   scripts/slurm/submit_sweep.sh data/sweeps/heads-slices.csv [sbatch options ...]
# Prints the two job ids; results land in runs/sweep-ARRAYJOB-*.h5,
# runs/sweep-ARRAYJOB.csv and runs/sweep-ARRAYJOB.png.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
table=${1:?usage: $0 TABLE [sbatch options ...]}
shift
[ -f "$table" ] || { echo "$0: no table $table" >&2; exit 2; }
# Rows of the table, parsed as CSV (a malformed table stops here, exit 2).
rows=$(PYTHONPATH="$here/../../scripts${PYTHONPATH:+:$PYTHONPATH}" /usr/bin/python3 -m mft.sweep count "$table")
[ "$rows" -ge 1 ] || { echo "$0: $table has a header and no rows" >&2; exit 2; }
array=$(sbatch --parsable --array=0-$((rows - 1)) "$@" "$here/sweep.sbatch" "$table")
array=${array%%;*}
collect=$(sbatch --parsable --dependency=afterok:"$array" "$here/collect.sbatch" "$array")
collect=${collect%%;*}
echo "sweep: array job $array ($rows runs), collect job $collect"

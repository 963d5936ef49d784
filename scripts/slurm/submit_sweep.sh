#!/usr/bin/env bash
# Submits a sweep: the array job over TABLE and the collect job after it.
#   scripts/slurm/submit_sweep.sh TABLE [--base INI] [--args OPTIONS] [--dry-run] [sbatch options ...]
#   scripts/slurm/submit_sweep.sh heads.csv --base run.ini --args "--train.steps 500" -A proj1 --time=02:00:00
# --dry-run: the whole check, then the rows as they will run and the two
# sbatch command lines as they would be given (the site's options
# included, $MFT_SBATCH or sbatch); nothing is written or submitted.
# Prints the two job ids; results land in runs/sweep-ARRAYJOB-*.h5,
# runs/sweep-ARRAYJOB.csv and runs/sweep-ARRAYJOB.png.
# Nothing is submitted before the whole sweep is checked (exit 2 and one
# line naming the table, the row or line, and mft's own message): the
# table, its header keys against the keys of the mft the tasks run
# ($MFT_PROGRAM, as run-mft.sh finds it: `mft --keys`), every row with the
# base configuration and the shared options by `mft train --dry-run`, and
# the Python the collect job runs (numpy, h5py, pandas, matplotlib). Then
# the table is copied with its base and shared options written in
# (--base, --args, and $MFT_SWEEP_ARGS) to runs/sweep-table-XXXXXX.csv, and
# that copy is what the tasks read: editing TABLE later changes nothing
# queued. The jobs go through sbatch.sh, which adds the site's options
# (options.sh); the collect job also gets the options given here that say
# where and on whose account it runs (--account, --partition, --qos,
# --reservation, --clusters, --constraint, --wckey, --export, --chdir,
# --licenses, --mail-*), not the array's size, time or output. It runs
# after the array however its tasks end (afterany) and reports the tasks
# that failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: $0 TABLE [--base INI] [--args OPTIONS] [--dry-run] [sbatch options ...]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
source "$here/options.sh"
table=$1
shift
shared=() sbatch_options=() dry_run=false
while [ $# -gt 0 ]; do
  case "$1" in
  --dry-run) dry_run=true && shift ;;
  --base | --args)
    [ $# -ge 2 ] || { echo "$0: $1 needs a value" >&2; exit 2; }
    shared+=("$1" "$2")
    shift 2
    ;;
  --base=* | --args=*) shared+=("${1%%=*}" "${1#*=}") && shift ;;
  *) sbatch_options+=("$1") && shift ;;
  esac
done
# The tasks get MFT_SWEEP_ARGS through the copy of the table, checked with the rest.
if [ -n "${MFT_SWEEP_ARGS:-}" ]; then
  shared+=(--args "$MFT_SWEEP_ARGS")
  unset MFT_SWEEP_ARGS
fi
mft_site_options || exit 2 # the site's files are read now, so that a bad line stops the sweep before its check
mft_placement_options ${sbatch_options[@]+"${sbatch_options[@]}"} || exit 2
placed=(${mft_sbatch_placed[@]+"${mft_sbatch_placed[@]}"})
# Only a regular file: a FIFO would block the reader, a folder or device is no table.
[ -e "$table" ] || { echo "$0: no table $table" >&2; exit 2; }
[ -f "$table" ] || { echo "$0: $table is not a regular file (a sweep table is a CSV file)" >&2; exit 2; }
# The check, then the copy the tasks read. env.sh is sourced in these
# subshells only: it sets MFT_PROGRAM and MPI's environment for mft, and its
# choices for this machine (OPENBLAS_CORETYPE) must not reach the jobs,
# which sbatch starts with the environment of this script.
mft_sweep() {
  (
    set +e # env.sh is written for scripts without -e
    source "$here/../env.sh"
    [ -x "$MFT_PROGRAM" ] || { echo "$0: no mft program at $MFT_PROGRAM (build it, or set MFT_BUILD)" >&2; exit 2; }
    [ "$1" = check ] && set -- "$@" --mft "$MFT_PROGRAM"
    PYTHONPATH="$MFT_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}" "${MFT_PYTHON:-python3}" -m mft.sweep "$@"
  )
}
checked=$(mft_sweep check "$table" ${shared[@]+"${shared[@]}"})
rows=${checked##*rows: } # its last line: "rows: N"
[ "$rows" -ge 1 ] || { echo "$0: $table has a header and no rows" >&2; exit 2; }
if $dry_run; then
  # The lines sbatch.sh would run: the site's options, then these.
  shown() { printf '%q ' "${MFT_SBATCH:-sbatch}" ${mft_sbatch_site[@]+"${mft_sbatch_site[@]}"} "$@" | sed 's/ $//'; }
  echo "$checked"
  echo "dry run: nothing written or submitted; at submission the table is copied to runs/sweep-table-XXXXXX.csv"
  echo "array job:   $(shown --parsable --array=0-$((rows - 1)) ${sbatch_options[@]+"${sbatch_options[@]}"} \
    "$here/sweep.sbatch" runs/sweep-table-XXXXXX.csv)"
  echo "collect job: $(shown --parsable ${placed[@]+"${placed[@]}"} --dependency=afterany:ARRAYJOB \
    "$here/collect.sbatch" ARRAYJOB "$rows" runs/sweep-table-XXXXXX.csv)"
  exit 0
fi
mkdir -p runs
copy=$(mktemp --suffix=.csv "$PWD/runs/sweep-table-XXXXXX")
trap 'rm -f "$copy"' EXIT
mft_sweep freeze "$table" -o "$copy" ${shared[@]+"${shared[@]}"} >/dev/null
array=$("$here/sbatch.sh" --parsable --array=0-$((rows - 1)) ${sbatch_options[@]+"${sbatch_options[@]}"} \
  "$here/sweep.sbatch" "$copy")
array=${array%%;*}
trap - EXIT
collect=$("$here/sbatch.sh" --parsable ${placed[@]+"${placed[@]}"} --dependency=afterany:"$array" \
  "$here/collect.sbatch" "$array" "$rows" "$copy") || {
  echo "$0: array job $array was submitted, its collect job was not (above); submit it with" \
    "$here/sbatch.sh --dependency=afterany:$array $here/collect.sbatch $array $rows $copy" >&2
  exit 1
}
collect=${collect%%;*}
echo "sweep: array job $array ($rows runs), collect job $collect; the tasks read ${copy#"$PWD/"}"

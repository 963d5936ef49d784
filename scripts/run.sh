#!/usr/bin/env bash
# Installs what is missing, builds (its progress on one line), and runs the
# default main job, `mft train` on the built-in default problem, on 2 ranks
# (MFT_RANKS to change).
# Extra arguments go to mft train, e.g.
#   scripts/run.sh --model.heads 128 --train.steps 500 -depth_ts_monitor
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$MFT_ROOT/scripts/install-deps.sh"
mft_build_progress
ranks=${MFT_RANKS:-2}
oversubscribe=()
[ "$(mft_cores)" -lt "$ranks" ] && oversubscribe=(--oversubscribe)
mkdir -p "$MFT_ROOT/runs"
# The quick start's own output is replaced on every run; an output.file or
# output.overwrite given as an argument wins.
out="$MFT_ROOT/runs/train-default.h5"
defaults=()
case " $* " in *" --output.file "*) out="(see --output.file)" ;; *) defaults+=(--output.file "$out") ;; esac
case " $* " in *" --output.overwrite "*) ;; *) defaults+=(--output.overwrite true) ;; esac
mpirun -q -n "$ranks" "${oversubscribe[@]}" "$MFT_BUILD/apps/mft" train "${defaults[@]}" "$@"
echo "output: $out (inspect with: h5dump -A FILE, or ${MFT_PYTHON:-python3} scripts/plot_history.py FILE)"

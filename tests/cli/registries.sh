#!/usr/bin/env bash
# Every registered score map, optimiser, loss, readout and token norm (mft
# --choices model.attention, train.method, loss.kind, readout.kind,
# model.norm), whatever their names: training steps on 1
# and 3 ranks match the independent NumPy model's gradient and the method's
# update (scripts/check_gradient_step.py: the reference must know the
# entry's formula, or the check fails naming it), the two rank counts agree
# to reduction rounding, and a run stopped halfway and continued with
# --restart is bit-identical to the straight run on both (the tokens' spread
# through depth recomputed too). A new entry is
# tested here without a line of this file naming it.
source "$(dirname "$0")/common.sh"

small=(--model.d 4 --model.head_dim 3 --model.heads 5 --model.slices 3 --data.task teacher --data.sequences 8
       --data.tokens 6 --init.sigma_qk 0.3 --train.dtau 0.05 --train.lambda 0.05 --output.snapshot_every 1
       --output.token_spread true)

# entry NAME CHECKED ARGS...: 4 steps of NAME's run on 1 and 3 ranks; the
# first CHECKED steps against the reference; the ranks' agreement; the restart.
entry() {
  local name=$1 checked=$2
  shift 2
  for ranks in 1 3; do
    mft_run "$ranks" train "${small[@]}" "$@" --train.steps 4 --output.file "$name-$ranks.h5"
    [ "$status" -eq 0 ] || { fail "$name on $ranks ranks: exit $status"; cat err.txt; continue; }
    if "$PYTHON" "$SCRIPTS/check_gradient_step.py" "$name-$ranks.h5" --steps "$checked" >check.txt 2>&1; then
      echo "ok: $name on $ranks ranks: $checked steps match the reference"
    else
      fail "$name on $ranks ranks: the steps do not match the reference"
      cat check.txt
    fi
    mft_run "$ranks" train "${small[@]}" "$@" --train.steps 2 --output.file "$name-$ranks-part.h5"
    [ "$status" -eq 0 ] || { fail "$name on $ranks ranks, first half: exit $status"; cat err.txt; continue; }
    mft_run "$ranks" train --train.steps 4 --restart "$name-$ranks-part.h5"
    [ "$status" -eq 0 ] || { fail "$name on $ranks ranks, restart: exit $status"; cat err.txt; continue; }
    same_runs "$name-$ranks.h5" "$name-$ranks-part.h5" || fail "$name on $ranks ranks: the restart is not bit-identical"
  done
  "$PYTHON" - "$name-1.h5" "$name-3.h5" <<'PY' || fail "$name: 1 and 3 ranks differ"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for g in ("particles", "optimizer"):
    for k in (a[g] if g in a else []):
        if k in ("step", "tau", "t"):
            assert np.array_equal(a[g][k][...], b[g][k][...]), (g, k)
            continue
        x, y = a[g][k][...], b[g][k][...]
        err = np.abs(x - y).max() / max(np.abs(x).max(), 1e-300)
        assert err < 1e-11, f"/{g}/{k}: 1 and 3 ranks differ by {err:.2e} relative"
print(f"{sys.argv[1]} and {sys.argv[2]} agree to 1e-11")
PY
}

choices() {
  local names
  names=$("$MFT" --choices "$1") || fail "mft --choices $1: exit $?"
  [ "$(echo "$names" | wc -w)" -ge 2 ] || fail "too few registered $1: '$names'"
  echo "$1:" $names >&2
  echo "$names"
}
maps=$(choices model.attention)
methods=$(choices train.method)
losses=$(choices loss.kind)
readouts=$(choices readout.kind)
norms=$(choices model.norm)

# Score maps, with the causal mask, by the flow's Euler step.
for map in $maps; do
  entry "attention-$map" 1 --model.attention "$map" --model.causal true
done
# Optimisers with the MLP's particles beside the heads: three steps (the
# state's recursion past its first step).
for method in $methods; do
  entry "method-$method" 3 --train.method "$method" --model.mlp_particles 3 --model.mlp_width 4 \
    --model.activation gelu
done
# Losses and readouts with two outputs (a classifier's loss needs two classes).
for loss in $losses; do
  entry "loss-$loss" 1 --loss.kind "$loss" --readout.dim 2
done
for readout in $readouts; do
  # A readout that the teacher's data cannot feed (one of next symbols)
  # says so in one line; it then runs on a task of symbols, whose readout
  # decides d_out itself.
  mft_run 1 train "${small[@]}" --readout.kind "$readout" --readout.dim 2 --dry-run
  if [ "$status" -eq 2 ] && grep -q "needs a task of symbols" err.txt; then
    small_teacher=("${small[@]}")
    small=(--model.d 6 --model.head_dim 3 --model.heads 5 --model.slices 3 --data.task markov --data.vocab 2
           --model.position_dim 4 --data.sequences 8 --data.tokens 6 --init.sigma_qk 0.3 --train.dtau 0.05
           --train.lambda 0.05 --output.snapshot_every 1 --output.token_spread true --model.causal true)
    entry "readout-$readout" 1 --readout.kind "$readout" --loss.kind cross-entropy
    small=("${small_teacher[@]}")
  else
    entry "readout-$readout" 1 --readout.kind "$readout" --readout.dim 2
  fi
done
for norm in $norms; do
  entry "norm-$norm" 1 --model.norm "$norm"
done
finish

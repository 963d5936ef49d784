#!/usr/bin/env bash
# A run whose depth trajectory does not fit run.max_memory trains with
# checkpoints (depth.checkpoint_slices auto), says so in its header, and
# gives the particles of the run that keeps every step, bit for bit; a
# restart may change the plan; a limit too tight for any plan is refused.
source "$(dirname "$0")/common.sh"

# 32 slices of 4 RK4 steps: the trajectory of every step is about 160 MiB a
# rank, the rest of the run about 80 MiB.
args=(--model.heads 4 --model.slices 32 --depth.steps_per_slice 4 --model.d 16 --model.head_dim 8
      --data.task gaussian --data.sequences 128 --data.tokens 16 --output.snapshot_every 1)

mft_run 2 train "${args[@]}" --train.steps 3 --output.file full.h5
[ "$status" -eq 0 ] || { fail "every step kept: exit $status"; cat err.txt; }
grep -q "a checkpoint every" out.txt && fail "checkpoints without a memory limit"

mft_run 2 train "${args[@]}" --train.steps 2 --run.max_memory 120M --output.file bounded.h5
[ "$status" -eq 0 ] || { fail "under run.max_memory 120M: exit $status"; cat err.txt; }
grep "a checkpoint every" out.txt || fail "the header does not state the checkpoints: $(head -6 out.txt)"
# The restart keeps every step (the limit lifted): the plan may change.
mft_run 2 train --restart bounded.h5 --train.steps 3 --run.max_memory 0
[ "$status" -eq 0 ] || { fail "restart: exit $status"; cat err.txt; }
grep -q "a checkpoint every" out.txt && fail "the restart without a limit kept checkpoints"
mft_run 2 train --restart bounded.h5 --train.steps 3 --depth.checkpoint_slices 3 --dry-run
grep -q "a checkpoint every 3 slices" out.txt || fail "a configured spacing not stated: $(head -6 out.txt)"

"$PYTHON" - <<'PY' || fail "checkpointed and stored trajectories differ"
import h5py, numpy as np
a, b = h5py.File("full.h5", "r"), h5py.File("bounded.h5", "r")
assert list(a["particles/step"][:]) == list(b["particles/step"][:]) == [0, 1, 2, 3]
for name in ("Q", "K", "V"):
    assert np.array_equal(a["particles/" + name][...], b["particles/" + name][...]), name
for h in ("risk", "grad_norm"):
    assert np.array_equal(a["history/" + h][...], b["history/" + h][...]), h
print("particles and history equal bit for bit over 3 steps")
PY

mft_run 2 train "${args[@]}" --train.steps 2 --run.max_memory 80M --output.file tight.h5
[ "$status" -eq 2 ] || fail "a limit no plan fits: exit $status (2 expected)"
grep -q "run.max_memory" err.txt || fail "the refusal does not name run.max_memory: $(cat err.txt)"
[ -e tight.h5 ] && fail "a refused run left tight.h5"
finish

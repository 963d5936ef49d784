#!/usr/bin/env bash
# Online data, held-out streams of their own and a sparse history:
# - a fresh minibatch per step (data.online) with a history row every k steps
#   restarts bit for bit, on 1 and 3 ranks, and the history keeps the rows of
#   its schedule (every k-th step and the last);
# - the online run is the same on 1, 2 and 3 ranks (to rounding);
# - the held-out set does not depend on data.sequences, and data.test_seed
#   changes it;
# - a restart from a snapshot between two rows writes no row there.
source "$(dirname "$0")/common.sh"

run=(--model.heads 5 --model.slices 3 --data.task icl-linear --data.sequences 9 --data.tokens 6
     --data.test_sequences 7 --data.online true --train.method adam --train.batch 12 --train.dtau 0.02
     --output.history_every 3 --output.snapshot_every 2)

for ranks in 1 3; do
  restart_case "$ranks" 12 "${run[@]}"
  "$PYTHON" -c "
import h5py
f = h5py.File('straight.h5', 'r')
assert list(f['history/step'][:]) == [0, 3, 6, 9, 12], f['history/step'][:]
assert list(f['particles/step'][:]) == [0, 2, 4, 6, 8, 10, 12], f['particles/step'][:]
assert f['history'].attrs['complete'] == 5
" || fail "$ranks ranks: rows or snapshots off their schedule"
  cp straight.h5 "online$ranks.h5"
done

# Rank-invariance: the batches are keyed by (data.seed, step), not by rank.
mft_run 2 train "${run[@]}" --train.steps 12 --output.file online2.h5
[ "$status" -eq 0 ] || { fail "2 ranks: exit $status"; cat err.txt; }
"$PYTHON" - <<'PY' || fail "online runs on 1, 2, 3 ranks differ"
import h5py, numpy as np
f = [h5py.File(f"online{k}.h5", "r") for k in (1, 2, 3)]
for k in (1, 2):
    for s in ("Q", "K", "V"):
        a, b = f[0]["particles/" + s][...], f[k]["particles/" + s][...]
        err = np.abs(a - b).max() / np.abs(a).max()
        print(f"{k + 1} ranks, {s}: max relative difference {err:.2e}")
        assert err < 1e-10, (k, s, err)
    for h in ("risk", "batch_risk", "test_risk"):
        a, b = f[0]["history/" + h][...], f[k]["history/" + h][...]
        assert np.all(np.abs(a - b) <= 1e-10 * np.abs(a)), (k, h, a, b)
PY

# The online batch risk is not the risk of the N fixed sequences: the steps
# train on other data.
"$PYTHON" -c "
import h5py, numpy as np
f = h5py.File('online1.h5', 'r')
r, b = f['history/risk'][...], f['history/batch_risk'][...]
assert np.all(r != b), (r, b)
" || fail "the online batches are the evaluation sequences"

# The held-out set: the same for N = 9 and N = 20, another for test_seed 4.
held=(--model.heads 2 --model.slices 2 --data.tokens 6 --data.test_sequences 5 --train.steps 0)
for task in icl-linear gaussian teacher; do
  mft_run 1 train "${held[@]}" --data.task "$task" --data.sequences 9 --output.file "h9-$task.h5"
  [ "$status" -eq 0 ] || { fail "$task N = 9: exit $status"; cat err.txt; }
  mft_run 1 train "${held[@]}" --data.task "$task" --data.sequences 20 --output.file "h20-$task.h5"
  mft_run 1 train "${held[@]}" --data.task "$task" --data.sequences 9 --data.test_seed 4 --output.file "h9s-$task.h5"
  "$PYTHON" - "$task" <<'PY' || fail "$task: the held-out set depends on N or ignores data.test_seed"
import sys, h5py, numpy as np
task = sys.argv[1]
a, b, c = (h5py.File(f"{p}-{task}.h5", "r") for p in ("h9", "h20", "h9s"))
for k in ("test_tokens", "test_targets"):
    assert np.array_equal(a["data/" + k][...], b["data/" + k][...]), k
    assert not np.array_equal(a["data/" + k][...], c["data/" + k][...]), k
assert np.array_equal(a["data/tokens"][...], b["data/tokens"][:9])
assert np.array_equal(a["data/tokens"][...], c["data/tokens"][...])
# No held-out sequence is a training sequence.
train = {t.tobytes() for t in b["data/tokens"][...]}
assert not any(t.tobytes() in train for t in a["data/test_tokens"][...])
print(task, ": held-out set independent of N, changed by data.test_seed")
PY
done

# A restart from a snapshot between rows (the file of a run killed after
# it) adds no row there: the history stays on its schedule.
mft_run 1 train "${run[@]}" --train.steps 12 --output.file cut.h5
"$PYTHON" - <<'PY'
import h5py
# Keep the snapshots up to step 4 and the rows up to step 3, as a run killed
# between the snapshot of step 4 and the row of step 6 leaves them.
with h5py.File("cut.h5", "r+") as f:
    f["particles"].attrs["complete"] = 3
    f["history"].attrs["complete"] = 2
PY
mft_run 1 train "${run[@]}" --train.steps 12 --restart cut.h5
[ "$status" -eq 0 ] || { fail "restart from a snapshot between rows: exit $status"; cat err.txt; }
grep -q "restart from cut.h5: step 4" out.txt || { fail "not restarted from step 4"; cat out.txt; }
same_runs online1.h5 cut.h5 || fail "a restart between rows differs from the straight run"
finish

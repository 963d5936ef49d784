#!/usr/bin/env bash
# Particles from a file (init.file, init.snapshot): a run continued from
# another run's snapshot computes what that run computed there, bit for bit;
# a file of particles alone (written by h5py, no /config) serves as well;
# the file and the resolved row are recorded; a run started from a file
# restarts without it.
source "$(dirname "$0")/common.sh"

shape=(--model.heads 5 --model.slices 3 --model.mlp_particles 2 --model.mlp_width 3 --data.sequences 10
       --data.tokens 6 --data.task teacher)
mft_run 2 train "${shape[@]}" --train.steps 4 --output.snapshot_every 2 --output.file t.h5
[ "$status" -eq 0 ] || { fail "training t.h5: exit $status"; cat err.txt; }

# The last snapshot's forward solve is the run's last history row; the
# particles written are the snapshot's.
for ranks in 2 3; do
  mft_run "$ranks" forward "${shape[@]}" --init.file t.h5 --output.file "f$ranks.h5"
  [ "$status" -eq 0 ] || { fail "forward from t.h5 on $ranks ranks: exit $status"; cat err.txt; }
done
# Row 1 (step 2) of t.h5, from the run file and from a file of its particles alone.
mft_run 2 forward "${shape[@]}" --init.file t.h5 --init.snapshot 1 --output.file row1.h5
[ "$status" -eq 0 ] || { fail "forward from row 1: exit $status"; cat err.txt; }
"$PYTHON" - <<'PY' || fail "could not write the particle file"
import h5py
with h5py.File("t.h5", "r") as t, h5py.File("alone.h5", "w") as f:
    for k in ("Q", "K", "V", "W1", "W2"):
        f["particles/" + k] = t["particles/" + k][0:2]  # rows 0 and 1, contiguous
PY
mft_run 2 forward "${shape[@]}" --init.file alone.h5 --output.file alone-run.h5
[ "$status" -eq 0 ] || { fail "forward from a particle file: exit $status"; cat err.txt; }
# Row 0 is the drawn particles of the same seed.
mft_run 2 forward "${shape[@]}" --init.file t.h5 --init.snapshot 0 --output.file row0.h5
mft_run 2 forward "${shape[@]}" --output.file drawn.h5
[ "$status" -eq 0 ] || { fail "forward with drawn particles: exit $status"; cat err.txt; }
"$PYTHON" - <<'PY' || fail "runs from t.h5 differ from what t.h5 computed"
import h5py, numpy as np
t = h5py.File("t.h5", "r")
last = int(t["particles"].attrs["complete"]) - 1
for name in ("f2.h5", "f3.h5"):
    f = h5py.File(name, "r")
    assert f["config"].attrs["init.file"] == "t.h5" and f["config"].attrs["init.snapshot"] == last, \
        dict(f["config"].attrs)
    for k in ("Q", "K", "V", "W1", "W2"):
        assert np.array_equal(f["particles/" + k][0], t["particles/" + k][last]), (name, k)
    R, R_t = f["forward"].attrs["risk"], t["history/risk"][-1]
    print(f"{name}: R = {R!r}, t.h5's last history row {R_t!r}")
    assert R == R_t if name == "f2.h5" else abs(R - R_t) <= 1e-12 * abs(R_t), (name, R, R_t)
step2 = list(t["history/step"][:]).index(2)
for name in ("row1.h5", "alone-run.h5"):
    R = h5py.File(name, "r")["forward"].attrs["risk"]
    print(f"{name}: R = {R!r}, t.h5 at step 2 {t['history/risk'][step2]!r}")
    assert R == t["history/risk"][step2], name
assert h5py.File("alone-run.h5", "r")["config"].attrs["init.snapshot"] == 1  # -1: the file's last row
a, b = (h5py.File(n, "r")["forward"].attrs["risk"] for n in ("row0.h5", "drawn.h5"))
assert a == b, (a, b)
PY

# Training goes on from the snapshot with another method; its first row is
# t.h5's last. A run started from a file restarts without the file.
cp t.h5 t2.h5
mft_run 2 train "${shape[@]}" --init.file t2.h5 --train.method adam --train.dtau 0.01 --train.steps 4 \
  --output.snapshot_every 1 --output.file a.h5
[ "$status" -eq 0 ] || { fail "adam from t2.h5: exit $status"; cat err.txt; }
mft_run 2 train "${shape[@]}" --init.file t2.h5 --train.method adam --train.dtau 0.01 --train.steps 2 \
  --output.snapshot_every 1 --output.file a-part.h5
rm t2.h5
mft_run 2 train --train.steps 4 --restart a-part.h5
[ "$status" -eq 0 ] || { fail "restart of a run from a removed init.file: exit $status"; cat err.txt; }
same_runs a.h5 a-part.h5 || fail "the restart of a run from init.file is not bit-identical"
"$PYTHON" - <<'PY' || fail "adam's first row is not t.h5's last"
import h5py
t, a = h5py.File("t.h5", "r"), h5py.File("a.h5", "r")
assert a["history/risk"][0] == t["history/risk"][-1], (a["history/risk"][0], t["history/risk"][-1])
print("adam from t.h5: first R", a["history/risk"][0], "= t.h5's last")
PY
finish

#!/usr/bin/env bash
# run.precision = mixed end to end: the default job's risk after 20 steps
# within 1e-5 relative of double's; the header says so; a step checked by
# the NumPy model from the file; a restart is
# bit-identical to the straight run (with Adam's state, on 1 and 3 ranks);
# 1 and 3 ranks agree to the float rounding; the key's value is written to
# /config and a restart keeps it; an unknown precision is refused.
source "$(dirname "$0")/common.sh"

for p in double mixed; do
  mft_run 2 train --train.steps 20 --run.precision "$p" --output.file "default-$p.h5"
  [ "$status" -eq 0 ] || { fail "the default job in $p: exit $status"; cat err.txt; }
done
grep -q "precision mixed" out.txt || fail "the header does not say mixed: $(head -3 out.txt)"
"$PYTHON" - <<'PY' || fail "mixed is not within 1e-5 of double after 20 steps"
import h5py, numpy as np
r = {p: h5py.File(f"default-{p}.h5", "r")["history/risk"][...] for p in ("double", "mixed")}
rel = abs(r["mixed"][-1] - r["double"][-1]) / r["double"][-1]
print(f"risk after 20 steps: double {r['double'][-1]:.10e}, mixed {r['mixed'][-1]:.10e}, relative {rel:.2e}")
assert rel < 1e-5 and rel > 0, rel
assert h5py.File("default-mixed.h5", "r")["config"].attrs["run.precision"] in (b"mixed", "mixed")
PY

# A mixed step checked from the file by the independent NumPy model, at
# mixed's documented tolerance (the check says it used it).
gradient_step mixed-step 2 --run.precision mixed --train.steps 2 --output.snapshot_every 1 --data.sequences 8 \
  --model.heads 6 --model.slices 3 \
  --model.mlp_particles 3 --model.mlp_width 4
grep -q "run.precision = mixed" check.txt || fail "check_gradient_step.py did not apply mixed's tolerance"

for ranks in 1 3; do
  restart_case "$ranks" 6 --run.precision mixed --train.method adam --train.dtau 0.01 --model.heads 18 \
    --output.snapshot_every 1 \
    --model.mlp_particles 4 --model.mlp_width 3
  grep -q "precision mixed" out.txt || fail "$ranks ranks: the restart does not run mixed"
  cp straight.h5 "straight-$ranks.h5"
done
"$PYTHON" - <<'PY' || fail "1 and 3 ranks differ beyond the float rounding"
import h5py, numpy as np
a, b = (h5py.File(f"straight-{r}.h5", "r") for r in (1, 3))
for name in ("Q", "K", "V", "W1", "W2"):
    x, y = a["particles/" + name][-1], b["particles/" + name][-1]
    rel = np.linalg.norm(x - y) / np.linalg.norm(x)
    print(f"{name}: 1 and 3 ranks, relative difference {rel:.2e}")
    assert rel < 1e-5, (name, rel)
PY

mft_run 1 train --train.steps 1 --run.precision half --output.file half.h5
[ "$status" -eq 2 ] || fail "run.precision half: exit $status (2 expected)"
grep -q "run.precision" err.txt || fail "the refusal does not name run.precision: $(cat err.txt)"
[ -e half.h5 ] && fail "a refused run left half.h5"
finish

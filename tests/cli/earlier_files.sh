#!/usr/bin/env bash
# Run files written by an earlier mft (tests/data/earlier_runs) restart with
# this one and continue to the risks that version gave (to 1e-10 relative).
# A file from before a /history column (simulated by deleting objective, tau
# and wall_time) restarts too: the restart adds each column, NaN in the past
# rows (tau: step x dtau), and continues to the same risks.
source "$(dirname "$0")/common.sh"
DATA="$(cd "$(dirname "$0")/../data/earlier_runs" && pwd)"

# compare FILE NAME: /history of FILE against continued.csv's rows of NAME.
compare() {
  "$PYTHON" - "$1" "$2" "$DATA/continued.csv" <<'PY'
import csv, math, sys
import h5py
path, name, table = sys.argv[1:4]
want = [r for r in csv.DictReader(open(table)) if r["file"] == name]
h = h5py.File(path, "r")["history"]
steps = [int(s) for s in h["step"][:]]
assert steps == [int(r["step"]) for r in want], f"{name}: steps {steps}"
worst = 0.0
for col in ("risk", "test_risk", "ntk_lambda_min"):
    for got, r in zip(h[col][:], want):
        w = float(r[col])
        if math.isnan(w):
            assert math.isnan(got), f"{name} step {r['step']}: {col} {got}, expected NaN"
            continue
        worst = max(worst, abs(got - w) / abs(w))
assert worst <= 1e-10, f"{name}: largest relative difference {worst:.3g} from the earlier version's continuation"
print(f"{name}: {len(steps)} rows equal the earlier version's to {worst:.2g} relative")
PY
}

for name in flow adam; do
  cp "$DATA/$name.h5" "$name.h5"
  mft_run 2 train --restart "$name.h5" --train.steps 20
  [ "$status" -eq 0 ] || { fail "$name: restart of the earlier file: exit $status"; cat err.txt; continue; }
  compare "$name.h5" "$name" || fail "$name: continued differently"
done

# A file from before three columns: they are added, the past rows NaN.
cp "$DATA/flow.h5" old.h5
"$PYTHON" - <<'PY'
import h5py
with h5py.File("old.h5", "r+") as f:
    for c in ("objective", "tau", "wall_time"):
        del f["history"][c]
    f["history"].attrs["columns"] = "step,risk,grad_norm,test_risk,ntk_lambda_min,ntk_lambda_max"
PY
mft_run 1 train --restart old.h5 --train.steps 20
[ "$status" -eq 0 ] || { fail "restart of a file without three columns: exit $status"; cat err.txt; }
compare old.h5 flow || fail "the file without three columns continued differently"
"$PYTHON" - <<'PY' || fail "the added columns"
import math
import h5py
h = h5py.File("old.h5", "r")["history"]
step, tau, objective, wall = (h[c][:] for c in ("step", "tau", "objective", "wall_time"))
past = step <= 10
assert all(t == s * 0.2 for t, s in zip(tau, step)), f"tau {tau}"
assert all(math.isnan(v) for v in objective[past]) and all(math.isnan(v) for v in wall[past]), "past rows not NaN"
assert all(abs(q - r) <= 1e-15 * r for q, r in zip(objective[~past], h["risk"][~past])), "objective != risk (lambda 0)"
assert all(w >= 0 for w in wall[~past]), f"wall_time {wall}"
columns = h.attrs["columns"]
columns = columns.decode() if isinstance(columns, bytes) else columns
added = ["tau", "objective", "baseline_ratio", "euler_dtau_max", "wall_time"]
assert columns.split(",")[-5:] == added, columns
# The held-out baseline a file from before it gets: the zero predictor on its held-out targets.
y = h5py.File("old.h5", "r")["data/test_targets"][...]
ratio, zero = h["baseline_ratio"][:], (y ** 2).sum(axis=1).mean() / 2
assert all(math.isnan(v) for v in ratio[past]) and all(math.isnan(v) for v in h["euler_dtau_max"][:][past])
assert all(abs(r - t / zero) <= 1e-14 * r for r, t in zip(ratio[~past], h["test_risk"][~past])), (ratio, zero)
print("added columns: tau = step x dtau, objective, baseline_ratio and wall_time NaN before the restart; "
      "/history.columns:", columns)
PY

# A restart that asks for a column the file never had (the tokens' spread):
# NaN before, measured after, the risks unchanged.
cp "$DATA/adam.h5" spread.h5
mft_run 2 train --restart spread.h5 --train.steps 20 --output.token_spread true
[ "$status" -eq 0 ] || { fail "restart with output.token_spread: exit $status"; cat err.txt; }
compare spread.h5 adam || fail "the restart with output.token_spread continued differently"
"$PYTHON" - <<'PY' || fail "the added token_spread column"
import math
import h5py
h = h5py.File("spread.h5", "r")["history"]
step, spread = h["step"][:], h["token_spread"][:]
past = step <= 10
assert all(math.isnan(v) for v in spread[past]), f"past rows {spread[past]}"
assert all(0 < v < 100 for v in spread[~past]), f"measured rows {spread[~past]}"
print("token_spread added by the restart: NaN before, measured after:", spread[~past])
PY
finish

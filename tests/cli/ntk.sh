#!/usr/bin/env bash
# mft ntk end to end: the /ntk group of FORMAT.md, --from a training run,
# bad input, and the injectivity table script at a small size.
source "$(dirname "$0")/common.sh"

mft_run 2 ntk --data.task families --families.kind mixture --cgf --data.sequences 12 --output.file k.h5
[ "$status" -eq 0 ] || { fail "mft ntk: exit $status"; cat err.txt; }
cat out.txt
grep -q "CGF margin (empirical" out.txt && grep -q "CGF margin (population" out.txt || fail "margins not printed"
"$PYTHON" - <<'PY' || fail "k.h5 /ntk does not follow the schema"
import h5py, numpy as np
f = h5py.File("k.h5", "r")
g = f["ntk"]
N, K, d = 12, 256, 8
assert g["gram"].shape == (N, N) and g["eigenvalues"].shape == (N,)
assert g["cgf_singular_values"].shape == (N,) and g["cgf_points"].shape == (K, d)
G = g["gram"][...]
assert np.array_equal(G, G.T)
ev = np.linalg.eigvalsh(G)
assert np.allclose(ev, g["eigenvalues"][...], rtol=1e-9, atol=1e-12 * ev.max())
assert g.attrs["part"] == "V" and g.attrs["snapshot"] == 0
assert g.attrs["lambda_min"] == g["eigenvalues"][0] and g.attrs["lambda_max"] == g["eigenvalues"][-1]
s = g["cgf_singular_values"][...]
assert np.all(np.diff(s) <= 0) and abs(g.attrs["cgf_margin"] - s[-1] / s[0]) < 1e-15
assert np.linalg.norm(g["cgf_points"][...], axis=1).max() <= 1.0 + 1e-12
for name in ("config", "data/tokens", "particles/Q"):
    assert name in f, name
PY

# --from a training run: the kernel at a later snapshot differs.
mft_run 2 train --model.heads 6 --model.slices 3 --data.sequences 6 --data.tokens 8 --train.steps 10 \
  --output.snapshot_every 5 --output.file run.h5
mft_run 2 ntk --from run.h5 --snapshot 0 --ntk.part QK --output.file k0.h5
[ "$status" -eq 0 ] || { fail "ntk --from: exit $status"; cat err.txt; }
mft_run 2 ntk --from run.h5 --output.file k2.h5
[ "$status" -eq 0 ] || { fail "ntk --from (last): exit $status"; cat err.txt; }
"$PYTHON" - <<'PY' || fail "--from snapshots are not the ones asked for"
import h5py
a, b = h5py.File("k0.h5", "r")["ntk"], h5py.File("k2.h5", "r")["ntk"]
assert a.attrs["snapshot"] == 0 and b.attrs["snapshot"] == 10 and a.attrs["part"] == "QK"
assert a["gram"].shape == (6, 6)
PY

# The stability watch: with ntk.every, /history/euler_dtau_max at every
# kernel row is the report's 2 N / lambda_max(K_all) of mft ntk at that
# snapshot; train.dtau above it is said once, though rows 0 and 15 both
# exceed it (0.0026 and 0.0031 against 0.004; 0.0056 and 0.0050 between).
watch=(--data.sequences 16 --data.tokens 6 --model.heads 4 --model.slices 2 --train.steps 15 --ntk.every 5
  --output.history_every 5 --output.snapshot_every 5)
mft_run 2 train "${watch[@]}" --train.dtau 0.004 --output.file watch.h5 --output.log watch.log
[ "$status" -eq 0 ] || { fail "stability watch: exit $status"; cat err.txt; }
[ "$(grep -c "^warning: train.dtau = 0.004 exceeds the largest stable Euler step" out.txt)" -eq 1 ] &&
  grep -q "a warning once if train.dtau exceeds it" out.txt ||
  { fail "stability watch: not one warning"; cat out.txt; }
for snapshot in 0 3; do
  mft_run 2 ntk --from watch.h5 --snapshot $snapshot --output.file watch-k$snapshot.h5
  [ "$status" -eq 0 ] || { fail "ntk --from watch.h5 --snapshot $snapshot: exit $status"; cat err.txt; }
done
"$PYTHON" - <<'PY' || fail "/history/euler_dtau_max is not the kernel's stable step"
import json, math
import h5py
h = h5py.File("watch.h5", "r")["history"]
stable = h["euler_dtau_max"][:]
assert list(h["step"][:]) == [0, 5, 10, 15], h["step"][:]
for row, name in ((0, "watch-k0.h5"), (3, "watch-k3.h5")):
    report = h5py.File(name, "r")["ntk"].attrs["euler_dtau_max"]
    assert abs(stable[row] - report) <= 1e-12 * report, (row, stable[row], report)
assert stable[0] < 0.004 and stable[3] < 0.004 and min(stable[1:3]) > 0.004, stable
events = [json.loads(line) for line in open("watch.log")]
warned = [e for e in events if e["event"] == "unstable_step"]
assert len(warned) == 1 and warned[0]["step"] == 0 and warned[0]["euler_dtau_max"] == stable[0], warned
PY
# Below the stable step, and with Adam (whose step it does not bound): stored, no warning.
mft_run 2 train "${watch[@]}" --train.dtau 0.002 --output.file calm.h5
[ "$status" -eq 0 ] && ! grep -q "^warning" out.txt || { fail "dtau below the stable step warned"; cat out.txt; }
mft_run 2 train "${watch[@]}" --train.method adam --train.dtau 0.004 --output.file adam.h5
[ "$status" -eq 0 ] && ! grep -q "^warning" out.txt && grep -q "stored only (train.adam with the squared loss" out.txt ||
  { fail "adam: a warning, or no header line"; cat out.txt; }

# Bad input: one line naming the key, exit 2, no output file.
expect_refused() { # TEXT ARGS...
  local text=$1
  shift
  rm -f bad.h5
  mft_run 2 "$@" --output.file bad.h5
  if [ "$status" -ne 2 ] || [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -qF -- "$text" err.txt || [ -e bad.h5 ]; then
    fail "$*: status $status"; cat err.txt
  else
    echo "ok: $(cat err.txt)"
  fi
}
expect_refused "ntk.part = W" ntk --ntk.part W
expect_refused "ntk.part = mlp" ntk --ntk.part mlp
expect_refused "cgf.points = 20" ntk --cgf --cgf.points 20
expect_refused "--snapshot" ntk --snapshot 2
expect_refused "nosuch.h5" ntk --from nosuch.h5
expect_refused "--snapshot = 7" ntk --from run.h5 --snapshot 7
expect_refused "families.values" ntk --data.task families --families.kind cube --families.values 1,2
expect_refused "cgf.radius" ntk --data.task families --families.kind laplace --cgf --cgf.radius 3
expect_refused "families.kind = sphere" ntk --data.task families --families.kind sphere
expect_refused "only mft ntk" train --cgf

# The table, small: every family agrees; the control is not injective in the population.
"$PYTHON" "$SCRIPTS/ntk_table.py" --tokens 16 --heads 8 >table.txt 2>&1 || { fail "ntk_table.py"; cat table.txt; }
cat table.txt
"$PYTHON" - <<'PY' || fail "the table is not what [B] predicts"
rows = [l.split() for l in open("table.txt") if l.split() and l.split()[0] in
        ("discrete", "cube", "laplace", "mixture", "gaussian-cov")]
assert len(rows) == 6, rows
for r in rows:
    assert r[-2] == "yes", r                     # NTK and CGF agree
for r in rows[1:4]:
    assert r[-1] == "yes", r                     # the families of [B]: injective populations
for r in rows[4:]:
    assert r[-1] == "no", r                      # one covariance: affine differences
PY
finish

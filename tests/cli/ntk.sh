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

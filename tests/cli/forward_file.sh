#!/usr/bin/env bash
# The forward run file follows FORMAT.md, and it can serve as input data:
# data.task = file on it reproduces the risk of the run that wrote it.
source "$(dirname "$0")/common.sh"

mft_run 2 forward --model.heads 5 --model.slices 3 --data.sequences 7 --output.file a.h5
[ "$status" -eq 0 ] || { fail "forward: exit $status"; cat err.txt; }
risk_a=$(sed -n 's/^risk = //p' out.txt)
grep -q "^wrote a.h5" out.txt || fail "no 'wrote a.h5' line"

# The build a file names is the one mft --version names.
"$MFT" --version >version.txt 2>version_err.txt || fail "mft --version: exit $?"
"$PYTHON" - <<'PY' || fail "a.h5 does not follow the schema"
import h5py, numpy as np, re
f = h5py.File("a.h5", "r")
assert f.attrs["format"] == "mft/1"
for a in ("mft_version", "created", "command_line", "compiled_for", "blas"):
    assert isinstance(f.attrs[a], str) and f.attrs[a], a
version = open("version.txt").read().splitlines()
assert version[0] == "mft " + f.attrs["mft_version"], (version[0], f.attrs["mft_version"])
assert version[1] == "compiled for " + f.attrs["compiled_for"], (version[1], f.attrs["compiled_for"])
assert version[2] == "BLAS: " + f.attrs["blas"], (version[2], f.attrs["blas"])
assert re.fullmatch(r"(-march=[\w.-]+|the compiler's default target), \w+ [\d.]+, \w+(, sanitizers)?",
                    f.attrs["compiled_for"]), f.attrs["compiled_for"]
assert f.attrs["ranks"] == 2
c = f["config"].attrs
keys = """model.d model.head_dim model.heads model.slices model.mlp_width model.mlp_particles
model.activation depth.ts_type depth.rk_type depth.steps_per_slice readout.kind readout.coord
readout.weights init.seed init.sigma_qk init.sigma_v data.task data.sequences data.tokens
data.seed data.file output.file""".split()
missing = [k for k in keys if k not in c]
assert not missing, missing
assert c["model.heads"] == 5 and c["model.slices"] == 3 and c["readout.coord"] == 7
assert c["depth.ts_type"] == "rk" and c["depth.rk_type"] == "4"
N, n, d, L, M, dh = 7, 16, 8, 3, 5, 8
assert f["data/tokens"].shape == (N, n, d)
assert f["data/targets"].shape == (N, 1)
assert f["particles/step"].shape == (1,) and f["particles/step"][0] == 0
assert f["particles/tau"].shape == (1,) and f["particles/tau"][0] == 0.0
assert f["particles/Q"].shape == (1, L, M, dh, d)
assert f["particles/K"].shape == (1, L, M, dh, d)
assert f["particles/V"].shape == (1, L, M, d, d)
assert f["particles/Q"].maxshape[0] is None      # grows with snapshots
assert f["forward/tokens_final"].shape == (N, n, d)
X1 = f["forward/tokens_final"][...]
yhat = X1[:, -1, 7]
assert np.allclose(f["forward/predictions"][:, 0], yhat)
R = 0.5 * np.mean((yhat - f["data/targets"][:, 0]) ** 2)
assert abs(R - f["forward"].attrs["risk"]) < 1e-14 * R, (R, f["forward"].attrs["risk"])
PY

# The same tokens read back from the file give the same risk (N and n come
# from the file).
mft_run 2 forward --model.heads 5 --model.slices 3 --data.task file --data.file a.h5 --output.file b.h5
[ "$status" -eq 0 ] || { fail "forward from file: exit $status"; cat err.txt; }
risk_b=$(sed -n 's/^risk = //p' out.txt)
[ "$risk_a" = "$risk_b" ] || fail "risk from the file $risk_b differs from $risk_a"
"$PYTHON" -c "
import h5py
c = h5py.File('b.h5', 'r')['config'].attrs
assert c['data.task'] == 'file' and c['data.file'] == 'a.h5' and c['data.sequences'] == 7
" || fail "b.h5 config does not record the file input"
finish

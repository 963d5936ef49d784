#!/usr/bin/env bash
# Tokens on the sphere (model.norm sphere) with given weights (init.file,
# whose shapes set the heads, slices and head dimension) and the tokens
# through depth (forward.tokens_depth): the token norms stay 1 up
# to the integrator's drift, which falls at RK4's order as the steps shrink
# and is below 1e-6 at 16 steps per slice; the recorded depths are the slice
# boundaries (or every step), the last row X(1); 1, 2 and 3 ranks agree.
source "$(dirname "$0")/common.sh"

# Q = K = sqrt(beta) I, V = T I (the depth [0, 1] is the time [0, T]):
# one head per slice, the clustering literature's self-attention dynamics;
# 12 sequences of 32 tokens uniform on the sphere of R^3.
"$PYTHON" - <<'PY' || fail "could not write the inputs"
import h5py, numpy as np
L, d, beta, T = 4, 3, 4.0, 3.0
with h5py.File("given.h5", "w") as f:
    eye = np.broadcast_to(np.eye(d), (1, L, 1, d, d))
    f["particles/Q"] = np.sqrt(beta) * eye
    f["particles/K"] = np.sqrt(beta) * eye
    f["particles/V"] = T * eye
x = np.random.default_rng(5).standard_normal((12, 32, d))
with h5py.File("sphere_tokens.h5", "w") as f:
    f["data/tokens"] = 3.0 * x  # not on the sphere: model.norm puts them there
    f["data/targets"] = np.zeros((12, 1))
PY
# No model.heads, slices or head_dim: the particle file decides them.
given=(--model.norm sphere --init.file given.h5 --data.task file --data.file sphere_tokens.h5
       --forward.tokens_depth true)
for k in 2 4 16; do
  mft_run 2 forward "${given[@]}" --depth.steps_per_slice "$k" --output.file "f$k.h5"
  [ "$status" -eq 0 ] || { fail "forward, $k steps per slice: exit $status"; cat err.txt; }
done
for ranks in 1 3; do
  mft_run "$ranks" forward "${given[@]}" --depth.steps_per_slice 4 --output.file "f4-$ranks.h5"
  [ "$status" -eq 0 ] || { fail "forward on $ranks ranks: exit $status"; cat err.txt; }
done
mft_run 2 forward "${given[@]}" --depth.steps_per_slice 2 --forward.every_step true --output.file steps.h5
[ "$status" -eq 0 ] || { fail "forward with every step: exit $status"; cat err.txt; }
"$PYTHON" - <<'PY' || fail "the tokens along depth are wrong"
import h5py, numpy as np
def norms(name):
    f = h5py.File(name, "r")
    X = f["forward/tokens_depth"][...]
    return f, np.abs(np.linalg.norm(X, axis=-1) - 1.0).max()
drift = {}
for k in (2, 4, 16):
    f, drift[k] = norms(f"f{k}.h5")
    X, s = f["forward/tokens_depth"], f["forward/depth"][...]
    assert X.shape == (12, 5, 32, 3) and np.allclose(s, np.arange(5) / 4, atol=1e-12), (X.shape, s)
    c = f["config"].attrs
    assert (c["model.heads"], c["model.slices"], c["model.head_dim"]) == (1, 4, 3), dict(c)
    assert np.array_equal(X[:, -1], f["forward/tokens_final"][...]), "the last row is not X(1)"
    assert abs(f["forward"].attrs["norm_drift"] - drift[k]) <= 1e-15, (f["forward"].attrs["norm_drift"], drift[k])
    print(f"{k} steps per slice: largest | |x| - 1 | along depth {drift[k]:.3e}")
order = np.log2(drift[2] / drift[4])
print(f"observed order of the drift: {order:.2f}")
assert 3.5 < order < 4.5, order  # RK4's local error
assert drift[16] < 1e-6, drift[16]
# The tokens left where they started: the flow moved them.
f = h5py.File("f4.h5", "r")
X = f["forward/tokens_depth"][...]
assert np.abs(X[:, -1] - X[:, 0]).max() > 0.1
# 1, 2 and 3 ranks, and the slice boundaries of every step's rows.
a, b, c = (h5py.File(n, "r")["forward/tokens_depth"][...] for n in ("f4-1.h5", "f4.h5", "f4-3.h5"))
assert max(np.abs(a - b).max(), np.abs(a - c).max()) <= 1e-12, (np.abs(a - b).max(), np.abs(a - c).max())
assert np.abs(np.linalg.norm(a, axis=-1) - 1).max() == h5py.File("f4-1.h5", "r")["forward"].attrs["norm_drift"]
g = h5py.File("steps.h5", "r")
Y, t = g["forward/tokens_depth"][...], g["forward/depth"][...]
assert Y.shape[1] == 9 and np.allclose(t, np.arange(9) / 8, atol=1e-12), (Y.shape, t)
assert np.array_equal(Y[:, ::2], h5py.File("f2.h5", "r")["forward/tokens_depth"][...])
PY
finish

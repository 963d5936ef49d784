#!/usr/bin/env bash
# A 5-step training run on 1, 2 and 3 ranks: the particles of every snapshot
# and the history agree to 1e-11 relative (only the order of the sums over
# heads differs). Uneven head counts and a rank without MLP particles.
source "$(dirname "$0")/common.sh"

args=(--model.heads 7 --model.slices 3 --model.mlp_particles 2 --model.mlp_width 3
      --data.sequences 12 --data.tokens 6 --train.steps 5 --output.snapshot_every 2)
for ranks in 1 2 3; do
  mft_run "$ranks" train "${args[@]}" --output.file "r$ranks.h5"
  [ "$status" -eq 0 ] || { fail "$ranks ranks: exit $status"; cat err.txt; }
done
"$PYTHON" - <<'PY' || fail "runs on 1, 2, 3 ranks differ"
import h5py, numpy as np
f = [h5py.File(f"r{k}.h5", "r") for k in (1, 2, 3)]
assert list(f[0]["particles/step"][:]) == [0, 2, 4, 5], f[0]["particles/step"][:]
for k in (1, 2):
    assert f[k].attrs["ranks"] == k + 1
    for s in ("Q", "K", "V", "W1", "W2"):
        a, b = f[0]["particles/" + s][...], f[k]["particles/" + s][...]
        err = np.abs(a - b).max() / np.abs(a).max()
        print(f"{k + 1} ranks, {s}: max relative difference {err:.2e}")
        assert err < 1e-11, (k, s, err)
    for h in ("risk", "objective", "grad_norm"):
        a, b = f[0]["history/" + h][...], f[k]["history/" + h][...]
        assert np.all(np.abs(a - b) <= 1e-11 * np.abs(a)), (k, h)
PY
finish

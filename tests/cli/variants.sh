#!/usr/bin/env bash
# The model variants end to end (MODEL.md §10): each run's one-Euler-step
# update is the gradient flow of the independent NumPy model, on 3 ranks for
# relu attention with the causal mask and two outputs; the held-out risk and
# accuracy are recomputed from the file; runs agree across rank counts; a
# restart with held-out data continues bit for bit; the digits script makes a
# file that trains with cross-entropy and reports accuracy.
source "$(dirname "$0")/common.sh"

small=(--model.d 4 --model.head_dim 3 --model.heads 5 --model.slices 3 --data.sequences 8
       --data.tokens 6 --train.steps 1 --train.ts_type euler --data.test_sequences 5)
cases=(
  "relu-causal-2:3:--model.attention relu --model.causal true --readout.dim 2 --init.sigma_qk 0.3 --output.token_spread true"
  "relu-causal-2-one-rank:1:--model.attention relu --model.causal true --readout.dim 2 --init.sigma_qk 0.3 --output.token_spread true"
  "causal-mean-ce:2:--model.causal true --readout.kind mean --readout.dim 3 --loss.kind cross-entropy --data.task teacher --model.mlp_particles 3 --model.mlp_width 4 --output.token_spread true"
  "relu-query-3-gaussian:3:--model.attention relu --readout.dim 3 --data.task gaussian --init.sigma_qk 0.3 --train.lambda 0.1"
)
for case in "${cases[@]}"; do
  name=${case%%:*}
  rest=${case#*:}
  ranks=${rest%%:*}
  read -r -a extra <<<"${rest#*:}"
  gradient_step "$name" "$ranks" "${small[@]}" "${extra[@]}"
done

# The same at the default sizes (N = 64, M = 16, L = 8, d = 8), where finite
# differences cross relu kinks: the forward-mode derivative decides (~40 s).
gradient_step relu-causal-default 3 --model.attention relu --model.causal true --readout.dim 2 \
  --init.sigma_qk 0.1 --train.steps 1 --train.ts_type euler --data.test_sequences 16

# The same run on 1 and 3 ranks: the same particles to reduction rounding.
"$PYTHON" - relu-causal-2.h5 relu-causal-2-one-rank.h5 <<'PY' || fail "1 and 3 ranks differ"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for k in ("Q", "K", "V"):
    x, y = a["particles"][k][...], b["particles"][k][...]
    rel = np.abs(x - y).max() / np.abs(y).max()
    assert rel < 1e-12, f"/particles/{k}: relative {rel:.1e}"
for k in ("risk", "test_risk", "token_spread"):
    x, y = a["history"][k][...], b["history"][k][...]
    assert np.allclose(x, y, rtol=1e-12, atol=0), f"/history/{k}: {x} vs {y}"
assert a["data/targets"].shape == (8, 2) and a["data/test_targets"].shape == (5, 2)
assert a["particles/Q"].attrs["species"] == "heads"
print("1 and 3 ranks agree")
PY

# Held-out data survive a restart: 4 steps straight equal 2 + 2, byte for byte.
run=(--model.d 4 --model.head_dim 3 --model.heads 4 --model.slices 2 --data.sequences 8
     --data.tokens 5 --readout.dim 3 --loss.kind cross-entropy --data.test_sequences 6
     --model.causal true --output.snapshot_every 2)
mft_run 2 train "${run[@]}" --train.steps 4 --output.file straight.h5
[ "$status" -eq 0 ] || { fail "straight: exit $status"; cat err.txt; }
mft_run 2 train "${run[@]}" --train.steps 2 --output.file part.h5
[ "$status" -eq 0 ] || { fail "first half: exit $status"; cat err.txt; }
mft_run 2 train "${run[@]}" --train.steps 4 --restart part.h5
[ "$status" -eq 0 ] || { fail "restart: exit $status"; cat err.txt; }
"$PYTHON" - straight.h5 part.h5 <<'PY' || fail "the restart with held-out data is not bit-identical"
import sys, h5py
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for name in ("particles/Q", "particles/K", "particles/V", "history/risk", "history/accuracy",
             "history/test_risk", "history/test_accuracy", "data/test_tokens", "data/test_targets"):
    assert a[name][...].tobytes() == b[name][...].tobytes(), name + " differs"
print("restart identical, held-out history included")
PY
mft_run 2 train "${run[@]}" --train.steps 4 --restart part.h5 --output.file changed.h5 --loss.kind squared
[ "$status" -eq 2 ] && grep -q "loss.kind" err.txt || fail "a restart that changes loss.kind must be refused: $(cat err.txt)"

# The digits: a small file from the script, trained with cross-entropy.
"$PYTHON" "$SCRIPTS/make_digits.py" --output digits.h5 --train-size 40 --test-size 20 >digits.txt 2>&1 \
  || { fail "make_digits.py failed"; cat digits.txt; }
"$PYTHON" - <<'PY' || fail "digits.h5 has the wrong layout"
import h5py, numpy as np
f = h5py.File("digits.h5", "r")
assert f["data/tokens"].shape == (40, 4, 20) and f["data/targets"].shape == (40, 10)
assert f["data/test_tokens"].shape == (20, 4, 20) and f["data/test_targets"].shape == (20, 10)
X = f["data/tokens"][...]
assert X[..., :16].min() >= 0 and X[..., :16].max() <= 1, "pixels in [0, 1]"
assert np.array_equal(X[0, :, 16:], np.eye(4)), "patch position one-hot"
assert np.all(f["data/targets"][...].sum(axis=1) == 1), "one-hot targets"
PY
gradient_step digits-run 2 --data.task file --data.file digits.h5 --readout.kind mean --readout.dim 10 \
  --loss.kind cross-entropy --model.heads 4 --model.slices 2 --train.steps 1 --train.ts_type euler
grep -q "accuracy .*test R .*test acc" out.txt || fail "digits: the progress line has no accuracy columns"

# The held-out baselines, recomputed from the file's data: a classifier's
# training class frequencies (add-one) as every sequence's probabilities
# (their cross-entropy and the majority class's accuracy), the squared
# loss's zero predictor; test_risk over the reference in every row.
mft_run 1 train --data.task file --data.file digits.h5 --readout.kind mean --readout.dim 10 \
  --loss.kind cross-entropy --model.heads 4 --model.slices 2 --train.steps 2 --output.file prior.h5
[ "$status" -eq 0 ] || { fail "the digits with held-out data: exit $status"; cat err.txt; }
mft_run 1 train "${run[@]/cross-entropy/squared}" --train.steps 2 --output.file zero.h5
[ "$status" -eq 0 ] || { fail "squared loss with held-out data: exit $status"; cat err.txt; }
"$PYTHON" - prior.h5 zero.h5 <<'PY' || fail "/baselines is not the constant predictors' held-out risk"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    y, t, b = f["data/targets"][...], f["data/test_targets"][...], f["baselines"]
    p = (y.sum(axis=0) + 1) / (len(y) + y.shape[1])
    ce = -(t * np.log(p)).sum(axis=1).mean()
    majority = (t.argmax(axis=1) == p.argmax()).mean()
    assert b.attrs["reference"] == "prior" and b.attrs["unit"] == "nats", dict(b.attrs)
    assert abs(b["prior"][0] - ce) <= 1e-14 * ce and b["prior"].attrs["accuracy"] == majority, (b["prior"][0], ce)
    h = f["history"]
    assert np.allclose(h["baseline_ratio"][...], h["test_risk"][...] / ce, rtol=1e-15, atol=0)
    assert "baseline_gap" not in h
with h5py.File(sys.argv[2], "r") as f:
    t, b = f["data/test_targets"][...], f["baselines"]
    zero = (t ** 2).sum(axis=1).mean() / 2
    assert b.attrs["reference"] == "zero" and b.attrs["unit"] == "risk", dict(b.attrs)
    assert abs(b["zero"][0] - zero) <= 1e-14 * zero, (b["zero"][0], zero)
print("baselines recomputed")
PY
grep -q "^held-out risk: .*; baseline .* (zero: the zero predictor, yhat = 0), ratio" out.txt ||
  { fail "no held-out baseline line at the end"; cat out.txt; }
mft_run 1 forward --from zero.h5 --output.file zero-forward.h5
grep -q "^baseline: zero .* (the zero predictor, yhat = 0), test risk / baseline = " out.txt ||
  { fail "forward --from: no baseline line"; cat out.txt; }
finish

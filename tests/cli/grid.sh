#!/usr/bin/env bash
# The 2-D process grid: the same runs on 1 rank and on grids of head ranks x
# sequence groups (2 x 2, 1 x 3, 3 x 1) agree to 1e-12 relative: training
# (history with held-out risk, every snapshot), Adam on minibatches with the
# NTK in the history, a forward solve's final tokens and an NTK Gram matrix.
# A restart and mft ntk --from may change the grid. Tokens that overflow in
# one group's block alone stop every group in one line (no hang). A grid
# that does not divide the ranks is refused in one line with no file.
source "$(dirname "$0")/common.sh"

base=(--model.heads 7 --model.slices 3 --model.head_dim 3 --data.tokens 5
      --output.snapshot_every 2)
train=("${base[@]}" --data.sequences 11 --data.test_sequences 4 --train.steps 5)
adam=("${base[@]}" --data.sequences 10 --data.task teacher --train.method adam --train.batch 4
      --train.steps 4 --ntk.every 2 --readout.kind mean)
grids=("1 1" "4 2" "3 3" "3 1")
for grid in "${grids[@]}"; do
  read -r ranks groups <<<"$grid"
  tag="$ranks-$groups"
  mft_run "$ranks" train "${train[@]}" --parallel.sequence_groups "$groups" --output.file "t$tag.h5"
  [ "$status" -eq 0 ] || { fail "train on $ranks ranks, $groups groups: exit $status"; cat err.txt; }
  [ "$groups" -eq 1 ] || grep -q "sequence groups" out.txt || fail "$tag: the header does not show the grid"
  mft_run "$ranks" train "${adam[@]}" --parallel.sequence_groups "$groups" --output.file "a$tag.h5"
  [ "$status" -eq 0 ] || { fail "adam on $ranks ranks, $groups groups: exit $status"; cat err.txt; }
  mft_run "$ranks" forward "${train[@]}" --parallel.sequence_groups "$groups" --output.file "f$tag.h5"
  [ "$status" -eq 0 ] || { fail "forward on $ranks ranks, $groups groups: exit $status"; cat err.txt; }
  mft_run "$ranks" ntk "${train[@]}" --ntk.part all --parallel.sequence_groups "$groups" --output.file "n$tag.h5"
  [ "$status" -eq 0 ] || { fail "ntk on $ranks ranks, $groups groups: exit $status"; cat err.txt; }
done

# A run started on a 2 x 2 grid, continued on 3 x 1 (3 ranks, 3 groups).
mft_run 4 train "${base[@]}" --data.sequences 11 --data.test_sequences 4 --train.steps 4 \
  --parallel.sequence_groups 2 --output.file restarted.h5
[ "$status" -eq 0 ] || { fail "first half: exit $status"; cat err.txt; }
mft_run 3 train "${train[@]}" --parallel.sequence_groups 3 --restart restarted.h5
[ "$status" -eq 0 ] || { fail "restart on another grid: exit $status"; cat err.txt; }

# The NTK of a run's last snapshot on other grids than the run's (2 x 2).
for grid in "1 1" "3 3"; do
  read -r ranks groups <<<"$grid"
  mft_run "$ranks" ntk --from t4-2.h5 --ntk.part all --parallel.sequence_groups "$groups" \
    --output.file "from$ranks-$groups.h5"
  [ "$status" -eq 0 ] || { fail "ntk --from on $ranks ranks, $groups groups: exit $status"; cat err.txt; }
done

"$PYTHON" - "${grids[@]}" <<'PY' || fail "the grids disagree with one rank"
import sys
import h5py
import numpy as np

def compare(name, a, b, tol=1e-12):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, (name, a.shape, b.shape)
    keep = ~np.isnan(a)
    assert np.array_equal(keep, ~np.isnan(b)), name
    err = np.abs(a[keep] - b[keep]).max() / max(np.abs(a[keep]).max(), 1e-300)
    print(f"{name}: max relative difference {err:.2e}")
    assert err < tol, (name, err)

grids = [g.replace(" ", "-") for g in sys.argv[1:]]
one = grids[0]
for g in grids[1:]:
    ranks, groups = map(int, g.split("-"))
    t0, t = h5py.File(f"t{one}.h5", "r"), h5py.File(f"t{g}.h5", "r")
    assert t.attrs["sequence_groups"] == groups and t.attrs["head_ranks"] == ranks // groups, dict(t.attrs)
    for k in ("particles/Q", "particles/K", "particles/V", "history/risk", "history/test_risk",
              "history/grad_norm"):
        compare(f"train {g} {k}", t0[k][...], t[k][...])
    a0, a = h5py.File(f"a{one}.h5", "r"), h5py.File(f"a{g}.h5", "r")
    for k in ("particles/V", "optimizer/m_V", "optimizer/v_Q", "history/risk", "history/batch_risk",
              "history/ntk_lambda_min", "history/ntk_lambda_max"):
        compare(f"adam {g} {k}", a0[k][...], a[k][...])
    f0, f = h5py.File(f"f{one}.h5", "r"), h5py.File(f"f{g}.h5", "r")
    for k in ("forward/tokens_final", "forward/predictions"):
        compare(f"forward {g} {k}", f0[k][...], f[k][...])
    compare(f"forward {g} risk", f0["forward"].attrs["risk"], f["forward"].attrs["risk"])
    n0, n = h5py.File(f"n{one}.h5", "r"), h5py.File(f"n{g}.h5", "r")
    compare(f"ntk {g} gram", n0["ntk/gram"][...], n["ntk/gram"][...])
f0, f = h5py.File("from1-1.h5", "r"), h5py.File("from3-3.h5", "r")
compare("ntk --from on 3 x 1 gram", f0["ntk/gram"][...], f["ntk/gram"][...])
r, t0 = h5py.File("restarted.h5", "r"), h5py.File(f"t{one}.h5", "r")
for k in ("particles/Q", "particles/V", "history/risk", "history/test_risk"):
    compare(f"restarted on 3 x 1 {k}", t0[k][...], r[k][...])
PY

# The last of 4 sequences overflows (relu attention grows like |x|^3), so
# group 1 of 2 x 2 fails alone in the first forward solve: exit 4 (diverged),
# one line.
"$PYTHON" -c "
import h5py, numpy as np
x = np.random.default_rng(1).normal(size=(4, 5, 4))
x[3] *= 1e100
with h5py.File('one-huge.h5', 'w') as f:
    f['data/tokens'] = x
    f['data/targets'] = np.zeros((4, 1))
"
for command in train forward ntk; do
  mft_run 4 "$command" --data.task file --data.file one-huge.h5 --model.attention relu --model.heads 4 \
    --model.slices 2 --parallel.sequence_groups 2 --output.file "huge-$command.h5"
  [ "$status" -eq 4 ] || { fail "$command, one group's tokens overflow: exit $status, expected 4"; cat err.txt; }
  [ "$(wc -l <err.txt)" -eq 1 ] || { fail "$command: stderr is not one line"; cat err.txt; }
  echo "$command, one group overflows: $(cat err.txt)"
done

# 3 ranks cannot form 2 sequence groups: one line, exit 2, no file.
mft_run 3 train "${train[@]}" --parallel.sequence_groups 2 --output.file bad.h5
[ "$status" -eq 2 ] || fail "groups not dividing the ranks: exit $status, expected 2"
grep -q "parallel.sequence_groups = 2: must divide the 3 ranks" err.txt || { fail "no one-line error"; cat err.txt; }
[ "$(grep -c 'mft: error' err.txt)" -eq 1 ] || fail "the error is not one line"
ls bad.h5* >/dev/null 2>&1 && fail "a refused grid left a file"
# More groups than sequences.
mft_run 4 train "${base[@]}" --data.sequences 3 --parallel.sequence_groups 4 --output.file bad.h5
[ "$status" -eq 2 ] || fail "more groups than sequences: exit $status, expected 2"
grep -q "data.sequences = 3: fewer than the 4 sequence groups" err.txt || { fail "no one-line error"; cat err.txt; }
finish

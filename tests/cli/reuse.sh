#!/usr/bin/env bash
# A trained model reused with its architecture (--from): mft forward and mft
# ntk at a training run's last snapshot give the training's last risk (the
# causal mask and relu score map come from the file, not the defaults); a
# model key given against the file is refused in one line; init.file says
# which of its file's model keys differ; train --from starts a new run from
# the snapshot. A restart refuses fewer steps than its file has; the forward
# file keeps its held-out risk and predictions; the NTK report and its
# attributes; the resolved configuration names each section once.
source "$(dirname "$0")/common.sh"

model=(--model.causal true --model.attention relu --init.sigma_qk 0.02 --model.heads 8 --model.slices 4
       --data.sequences 24 --data.test_sequences 6 --train.dtau 0.05)
mft_run 2 train "${model[@]}" --train.steps 12 --output.file trained.h5 --output.log trained.jsonl
[ "$status" -eq 0 ] || { fail "training: exit $status"; cat err.txt; }
grep -q "^particles: drawn, init.seed = 1, init.sigma_qk = [0-9.e-]*, init.sigma_v = [0-9.e-]*$" out.txt ||
  { fail "train: the header does not say the particles were drawn"; cat out.txt; }
# The end of a run: where the loop's time went, in shares that add up.
"$PYTHON" - <<'PY' || { fail "no time split at the end of the run"; cat out.txt; }
import json, re
line = next(l for l in open("out.txt") if l.startswith("time per rank: "))
shares = [int(x) for x in re.findall(r"(\d+) %", line)]
assert len(shares) == 3 and abs(sum(shares) - 100) <= 2, line
end = [json.loads(l) for l in open("trained.jsonl")][-1]
assert end["event"] == "end" and 0 <= end["allreduce_seconds"] <= end["seconds"] + 1 and end["file_seconds"] >= 0, end
print(line.strip())
PY

# The last risk of the training, and what forward and ntk --from compute
# there (1 and 2 ranks, no model key given): equal to 1e-13 relative.
mft_run 2 forward --from trained.h5 --output.file fwd.h5
[ "$status" -eq 0 ] || { fail "forward --from: exit $status"; cat err.txt; }
grep -q "particles: trained.h5, the snapshot of step 12" out.txt || { fail "forward --from: no particles line"; cat out.txt; }
mft_run 1 ntk --from trained.h5 --output.file ntk.h5
[ "$status" -eq 0 ] || { fail "ntk --from: exit $status"; cat err.txt; }
cp out.txt ntk.txt
"$PYTHON" - <<'PY' || fail "--from does not reproduce the training's last risk"
import h5py, numpy as np
with h5py.File("trained.h5", "r") as t, h5py.File("fwd.h5", "r") as f, h5py.File("ntk.h5", "r") as k:
    risk, test_risk = t["history/risk"][-1], t["history/test_risk"][-1]
    fw, nt = f["forward"].attrs, k["ntk"].attrs
    for name, got, want in (("forward risk", fw["risk"], risk), ("forward test risk", fw["test_risk"], test_risk),
                            ("ntk risk", nt["risk"], risk)):
        print(f"{name}: {got!r} against the training's {want!r}")
        assert abs(got - want) <= 1e-13 * abs(want), name
    assert f["forward/test_predictions"].shape == (6, 1)
    assert f["config"].attrs["model.causal"] in ("true", b"true", 1, True), f["config"].attrs["model.causal"]
    assert f["config"].attrs["init.file"] in ("trained.h5", b"trained.h5")
    # The NTK report: K_V's definiteness, the rate bound and Euler's limit.
    N = t["data/tokens"].shape[0]
    assert nt["kv_positive_definite"] == (nt["kv_lambda_min"] > nt["kv_tolerance"])
    assert np.isclose(nt["rate_bound"], 2 * nt["kv_lambda_min"] / N, rtol=1e-15)
    assert np.isclose(nt["euler_dtau_max"], 2 * N / nt["all_lambda_max"], rtol=1e-15)
    assert nt["part"] in ("V", b"V") and np.isclose(nt["kv_lambda_min"], nt["lambda_min"], rtol=1e-15)
    print("ntk report:", {a: nt[a] for a in ("kv_lambda_min", "rate_bound", "all_lambda_max", "euler_dtau_max")})
PY
grep -q "^K_V positive definite: \(yes\|no\)" ntk.txt && grep -q "^largest stable Euler step: dtau < " ntk.txt ||
  { fail "ntk prints no report"; cat ntk.txt; }

# A model key against the file: one line naming both values, nothing written.
mft_run 1 forward --from trained.h5 --model.causal false --output.file refused.h5
line=$(cat err.txt)
if [ "$status" -ne 2 ] || [ "$(wc -l <err.txt)" -ne 1 ] || [ -e refused.h5 ] ||
   [[ "$line" != *"model.causal = false"*"model.causal = true"* ]]; then
  fail "forward --from --model.causal false: exit $status, '$line'"
fi
mft_run 1 ntk --from trained.h5 --model.heads 9 --output.file refused.h5
[ "$status" -eq 2 ] && grep -q "model.heads = 9.*model.heads = 8" err.txt || fail "ntk --from --model.heads 9: $(cat err.txt)"
mft_run 1 train --from trained.h5 --restart trained.h5
[ "$status" -eq 2 ] && grep -q "^mft: error: --from = trained.h5: " err.txt || fail "--from with --restart: $(cat err.txt)"

# init.file into a model of one's own: the keys that differ, in one line.
mft_run 1 forward --init.file trained.h5 --model.heads 8 --model.slices 4 --data.sequences 24 --output.file own.h5
[ "$status" -eq 0 ] || { fail "init.file: exit $status"; cat err.txt; }
grep -q "^particles: init.file trained.h5, row 2 of its /particles$" out.txt ||
  { fail "init.file: the header does not name the particles' source"; cat out.txt; }
grep -q "^init.file = trained.h5: its model differs from this run's in model.attention (file relu, here softmax), model.causal (file true, here false)" out.txt ||
  { fail "init.file does not say which model keys differ"; cat out.txt; }

# train --from: a new run from the snapshot, under new training keys.
mft_run 2 train --from trained.h5 --train.steps 3 --train.dtau 0.02 --output.file tuned.h5
[ "$status" -eq 0 ] || { fail "train --from: exit $status"; cat err.txt; }
grep -q "^particles: trained.h5, the snapshot of step 12 (tau 0.6), a new run from step 0$" out.txt ||
  { fail "train --from: its header does not name the particles' source"; cat out.txt; }
"$PYTHON" - <<'PY' || fail "train --from did not start from the trained particles"
import h5py, numpy as np
with h5py.File("trained.h5", "r") as t, h5py.File("tuned.h5", "r") as u:
    assert list(u["particles/step"][:]) == [0, 3], list(u["particles/step"][:])
    for name in t["particles"]:
        if name in ("step", "tau"):
            continue
        assert np.array_equal(u["particles"][name][0], t["particles"][name][-1]), name
    assert abs(u["history/risk"][0] - t["history/risk"][-1]) <= 1e-13 * t["history/risk"][-1]
    assert float(u["config"].attrs["train.dtau"]) == 0.02
print("train --from: step 0 holds the trained particles")
PY

# A restart only goes on: fewer steps than the file has are refused.
mft_run 1 train --restart trained.h5 --train.steps 5
[ "$status" -eq 2 ] && grep -q "train.steps = 5: trained.h5 is at step 12 already" err.txt ||
  fail "restart to fewer steps: exit $status, $(cat err.txt)"
"$PYTHON" -c "import h5py; assert int(h5py.File('trained.h5', 'r')['config'].attrs['train.steps']) == 12" ||
  fail "the refused restart changed the file's /config"

# The resolved configuration as INI: every section once.
mft_run 1 ntk --dry-run
dups=$(grep '^\[' out.txt | sort | uniq -d)
[ "$status" -eq 0 ] && [ -z "$dups" ] || fail "ntk --dry-run: sections more than once: $dups"
finish

#!/usr/bin/env bash
# Tasks of symbols (MODEL.md §13): in-context Markov chains and text, the
# next-token readout and its per-position cross-entropy.
# - The gradient of the next-token loss against the independent NumPy model
#   (forward mode and finite differences, scripts/check_gradient_step.py) on
#   1 and 3 ranks: softmax and linear attention, with and without the MLP.
# - The data as MODEL.md writes them: the tokens embed /data/symbols (one-hot
#   symbol, sinusoidal or one-hot position, zeros), the targets are the next
#   symbols; the baselines recomputed here from the held-out symbols and
#   matrices (chains) or from the text itself (the n-gram ladder).
# - Adam on online chains restarted halfway continues bit for bit on 1 and 3
#   ranks; mft forward --from a chain run reads its symbols and baselines.
# - Bad inputs: one line naming the key, exit 2, no file.
source "$(dirname "$0")/common.sh"

# merge ARRAY --KEY VALUE ...: sets `merged` to ARRAY's options (pairs) with
# each --KEY VALUE given replacing ARRAY's own (mft refuses a key twice).
merge() {
  local -n base=$1
  shift
  local -A given=()
  local extra=("$@") i
  for ((i = 0; i < ${#extra[@]}; i += 2)); do given[${extra[i]}]=1; done
  merged=()
  for ((i = 0; i < ${#base[@]}; i += 2)); do
    [ -n "${given[${base[i]}]:-}" ] || merged+=("${base[i]}" "${base[i + 1]}")
  done
  merged+=("${extra[@]}")
}

chains=(--data.task markov --data.vocab 3 --model.d 8 --model.position_dim 4 --data.tokens 6 --data.sequences 8
        --data.test_sequences 6 --readout.kind next-token --loss.kind cross-entropy --model.causal true
        --model.heads 5 --model.slices 3 --model.head_dim 3 --train.dtau 0.05 --output.snapshot_every 1)

# The gradient of the next-token loss, 2 Euler steps, on 1 and 3 ranks.
check_gradient() {
  local name=$1
  shift
  for ranks in 1 3; do
    merge chains --train.steps 2 "$@"
    mft_run "$ranks" train "${merged[@]}" --output.file "$name-$ranks.h5"
    [ "$status" -eq 0 ] || { fail "$name on $ranks ranks: exit $status"; cat err.txt; continue; }
    if "$PYTHON" "$SCRIPTS/check_gradient_step.py" "$name-$ranks.h5" --steps 2 >check.txt 2>&1; then
      echo "ok: $name on $ranks ranks: the next-token gradient matches the reference"
    else
      fail "$name on $ranks ranks: the gradient does not match the reference"
      cat check.txt
    fi
  done
}
check_gradient softmax
check_gradient linear --model.attention linear --init.sigma_v 0.5
check_gradient softmax-mlp --model.mlp_particles 3 --model.mlp_width 4 --model.activation gelu
check_gradient linear-mlp --model.attention linear --model.mlp_particles 3 --model.mlp_width 4 \
  --init.sigma_v 0.5 --model.positions one-hot --model.position_dim 6 --model.d 10 --readout.scale 2

# The data and baselines of a chain run, recomputed from the symbols.
"$PYTHON" - softmax-1.h5 linear-mlp-1.h5 <<'PY' || fail "the chains' data or baselines"
import sys, h5py, numpy as np
for path in sys.argv[1:]:
    f = h5py.File(path, "r")
    c = {k: v.decode() if isinstance(v, bytes) else v for k, v in f["config"].attrs.items()}
    k, p, d = int(c["data.vocab"]), int(c["model.position_dim"]), int(c["model.d"])
    for pre in ("", "test_"):
        S, X, Y = f[f"/data/{pre}symbols"][...], f[f"/data/{pre}tokens"][...], f[f"/data/{pre}targets"][...]
        assert S.dtype == np.int64 and S.min() >= 0 and S.max() < k, (path, pre)
        N, n = S.shape
        t = np.arange(1, n + 1)
        if c["model.positions"] == "one-hot":
            pos = np.eye(p)[t - 1]
        else:
            pos = np.zeros((n, p))
            w = 10000.0 ** (-2.0 * np.arange((p + 1) // 2) / p)
            pos[:, 0::2] = np.sin(np.outer(t, w))[:, : (p + 1) // 2]
            pos[:, 1::2] = np.cos(np.outer(t, w))[:, : p // 2]
        want = np.zeros((N, n, d))
        want[:, :, :k] = np.eye(k)[S]
        want[:, :, k:k + p] = pos
        assert np.abs(X - want).max() < 1e-15, (path, pre, "tokens")
        assert np.array_equal(Y, np.eye(k)[S[:, 1:]].reshape(N, -1)), (path, pre, "targets")
    S, P = f["/data/test_symbols"][...], f["/data/test_transitions"][...]
    assert np.allclose(P.sum(axis=2), 1.0) and P.min() > 0
    alpha = float(c["data.dirichlet"])
    nll = {"uniform": [], "unigram": [], "bigram": [], "oracle": []}
    for s, Pi in zip(S, P):
        for t in range(1, len(s)):
            seen, nxt = s[:t], s[t]
            nll["uniform"].append(np.log(k))
            nll["unigram"].append(-np.log((np.sum(seen == nxt) + 1) / (t + k)))
            pairs = [(a, b) for a, b in zip(seen[:-1], seen[1:]) if a == s[t - 1]]
            nll["bigram"].append(-np.log((sum(b == nxt for _, b in pairs) + alpha) / (len(pairs) + k * alpha)))
            nll["oracle"].append(-np.log(Pi[s[t - 1], nxt]))
    assert f["baselines"].attrs["reference"] in ("bigram", b"bigram")
    for name, values in nll.items():
        got = float(f[f"/baselines/{name}"][0])
        assert abs(got - np.mean(values)) < 1e-12, (path, name, got, np.mean(values))
    gap = f["/history/baseline_gap"][...] - (f["/history/test_risk"][...] - f["/baselines/bigram"][0])
    assert np.abs(gap).max() < 1e-15, "baseline_gap is not test_risk minus the bigram baseline"
    print(f"{path}: tokens, targets and the 4 baselines as recomputed")
PY

# The chains' law, on 3000 held-out chains at alpha 1 and 0.3: the first
# entry of every row is Beta(alpha, 2 alpha) (mean 1/3, variance
# 2 alpha^2 / (9 alpha^2 (3 alpha + 1))); s_1 follows each matrix's
# stationary law and s_{t+1} the row of s_t (counts against their
# expectations). Fixed streams: the bounds (5 standard errors) are for a
# draw that could have failed, not for a flaky test.
for alpha in 1 0.3; do
  mft_run 2 forward --data.task markov --data.vocab 3 --data.dirichlet "$alpha" --model.d 8 --model.position_dim 4 \
    --data.tokens 5 --data.sequences 4 --data.test_sequences 3000 --readout.kind next-token \
    --loss.kind cross-entropy --model.causal true --model.heads 2 --model.slices 1 --output.file law-$alpha.h5
  [ "$status" -eq 0 ] || { fail "chains at alpha $alpha: exit $status"; cat err.txt; continue; }
  "$PYTHON" - law-$alpha.h5 "$alpha" <<'PY' || fail "the chains' law at alpha $alpha"
import sys, h5py, numpy as np
f, alpha = h5py.File(sys.argv[1], "r"), float(sys.argv[2])
S, P = f["/data/test_symbols"][...], f["/data/test_transitions"][...]
N, k = P.shape[0], P.shape[1]
first = P[:, :, 0].ravel()
mean, var = 1 / 3, 2 * alpha ** 2 / (9 * alpha ** 2 * (3 * alpha + 1))
assert abs(first.mean() - mean) < 5 * np.sqrt(var / first.size), (first.mean(), mean)
assert abs(first.var() / var - 1) < 0.1, (first.var(), var)
pi = np.array([np.linalg.lstsq(np.vstack([Pi.T - np.eye(k), np.ones(k)]), np.r_[np.zeros(k), 1.0], rcond=None)[0]
               for Pi in P])
# pi_i(s_1) averages sum_j pi_i(j)^2 when s_1 ~ pi_i, but 1/k for a
# uniform start (the symmetric law makes every marginal 1/k either way).
drawn, second = pi[np.arange(N), S[:, 0]], (pi ** 2).sum(axis=1)
assert abs(drawn.mean() - second.mean()) < 5 * drawn.std() / np.sqrt(N), (drawn.mean(), second.mean())
assert second.mean() - 1 / k > 10 * drawn.std() / np.sqrt(N), "the test could not tell a uniform start"
observed, expected = np.zeros((k, k)), np.zeros((k, k))
for s, Pi in zip(S, P):
    for a, b in zip(s[:-1], s[1:]):
        observed[a, b] += 1
        expected[a] += Pi[a]
assert np.all(np.abs(observed - expected) < 5 * np.sqrt(expected)), (observed, expected)
print(f"alpha {alpha}: rows Beta(alpha, 2 alpha) (mean {first.mean():.4f}, variance {first.var():.4f} "
      f"against {var:.4f}), stationary starts and transitions within 5 standard errors")
PY
done

# Adam on online chains: stopped halfway and continued, bit for bit.
merge chains --data.online true --train.method adam --train.batch 4 --train.dtau 0.01 --data.probe_sequences 8
online=("${merged[@]}")
for ranks in 1 3; do
  mft_run "$ranks" train "${online[@]}" --train.steps 6 --output.file online-$ranks.h5
  [ "$status" -eq 0 ] || { fail "online chains on $ranks ranks: exit $status"; cat err.txt; continue; }
  grep -q "held-out cross-entropy: .* bigram baseline .* gap" out.txt ||
    { fail "the run's last lines do not give the held-out CE, the bigram baseline and the gap"; cat out.txt; }
  mft_run "$ranks" train "${online[@]}" --train.steps 3 --output.file online-$ranks-part.h5
  mft_run "$ranks" train --train.steps 6 --restart online-$ranks-part.h5
  [ "$status" -eq 0 ] || { fail "the restart on $ranks ranks: exit $status"; cat err.txt; continue; }
  same_runs online-$ranks.h5 online-$ranks-part.h5 && echo "ok: online chains on $ranks ranks: the restart is bit-identical" ||
    fail "online chains on $ranks ranks: the restart is not bit-identical"
done

# mft forward --from the chain run: its symbols and baselines come along.
mft_run 1 forward --from online-1.h5 --output.file from.h5
[ "$status" -eq 0 ] || { fail "forward --from a chain run: exit $status"; cat err.txt; }
"$PYTHON" - online-1.h5 from.h5 <<'PY' || fail "forward --from lost the symbols or baselines"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for name in ("/data/symbols", "/data/test_symbols", "/data/test_transitions", "/baselines/bigram"):
    assert np.array_equal(a[name][...], b[name][...]), name
print("forward --from keeps the symbols and baselines")
PY

# The attention maps and the ablation of mft forward, against the NumPy
# model: slice 0's head-averaged attention from the data's tokens; the
# induction score of the last history row from the probe's maps; the
# held-out risk with slice 0's V set to zero.
mft_run 2 forward --from online-1.h5 --output.attention true --ablate.slices 0 --output.file maps.h5
if [ "$status" -ne 0 ]; then
  fail "forward --output.attention --ablate.slices: exit $status"; cat err.txt
else
  grep -q "ablated slices 0: test risk" out.txt || fail "forward does not print the ablated risk"
  PYTHONPATH="$SCRIPTS" "$PYTHON" - online-1.h5 maps.h5 <<'PY' || fail "the attention maps or the ablation"
import sys, h5py, numpy as np
import mft.io, mft.reference as ref
run, maps = mft.io.open_run(sys.argv[1]), h5py.File(sys.argv[2], "r")
cfg = run.config
theta = run.particles(-1)
A, Ap = maps["/forward/attention"][...], maps["/forward/attention_probe"][...]
S, L, n, _ = A.shape
X = maps["/data/test_tokens"][:S]
Q, K = theta["Q"][0], theta["K"][0]
s = np.einsum("mhd,iad,mhe,ibe->imab", Q, X, K, X)
s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
P = np.exp(s - s.max(axis=3, keepdims=True))
P /= P.sum(axis=3, keepdims=True)
err = np.abs(A[:, 0] - P.mean(axis=1)).max()
assert err < 1e-12, f"slice 0's attention differs from the reference by {err:.2e}"
R = n // 2
hist = run.history
score = np.array([[Ap[i, l, a, a - R + 1] for i in range(Ap.shape[0]) for a in range(R, 2 * R)] for l in range(L)]).mean(axis=1)
assert np.abs(score - hist["induction_score"][-1]).max() < 1e-12, (score, hist["induction_score"][-1])
prev = np.array([[Ap[i, l, a, a - 1] for i in range(Ap.shape[0]) for a in range(1, n)] for l in range(L)]).mean(axis=1)
assert np.abs(prev - hist["previous_token_score"][-1]).max() < 1e-12
ablated = {k: v.copy() for k, v in theta.items()}
ablated["V"][0] = 0.0
Rt = ref.risk(run.test_tokens, run.test_targets, ablated, cfg)
got = float(maps["forward"].attrs["test_risk_ablated"])
assert abs(Rt - got) < 1e-10 * abs(Rt), (Rt, got)
print(f"attention of slice 0 to {err:.1e}; the probe's scores as in /history; ablated held-out risk {got:.6f} "
      f"as the reference's")
PY
fi
PYTHONPATH="$SCRIPTS" "$PYTHON" "$SCRIPTS/plot_attention.py" maps.h5 -o maps.png >plot.txt 2>&1 && [ -s maps.png ] &&
  grep -q "induction probe" plot.txt || { fail "plot_attention.py on the maps"; cat plot.txt; }
mft_run 1 train "${chains[@]}" --ablate.slices 0 --output.file bad.h5
[ "$status" -eq 2 ] && grep -q "ablate.slices = 0: read by mft forward alone" err.txt || fail "train took ablate.slices"
mft_run 1 forward --from online-1.h5 --ablate.slices 3 --output.file bad.h5
[ "$status" -eq 2 ] && grep -q "ablate.slices = 3: slice 3 of model.slices = 3" err.txt ||
  fail "an ablated slice past L: $(cat err.txt)"

# Text: a file every Debian machine has, read at test time.
text=/usr/share/common-licenses/GPL-3
words=(--data.task text --data.file "$text" --readout.kind next-token --loss.kind cross-entropy --model.causal true
       --data.tokens 12 --data.sequences 4 --data.test_sequences 5 --model.heads 4 --model.slices 2
       --model.position_dim 4 --train.steps 2 --train.dtau 0.01)
vocab=$("$PYTHON" -c "import sys; print(len(set(open(sys.argv[1], encoding='utf-8').read())))" "$text")
words+=(--model.d $((vocab + 4)))
mft_run 2 train "${words[@]}" --output.file text.h5
if [ "$status" -ne 0 ]; then
  fail "text on $text: exit $status"; cat err.txt
else
  "$PYTHON" - text.h5 "$text" <<'PY' || fail "the text task's vocabulary, windows or n-gram ladder"
import sys, h5py, numpy as np
from collections import Counter
f = h5py.File(sys.argv[1], "r")
text = open(sys.argv[2], encoding="utf-8").read()
chars = sorted(set(text))
k = len(chars)
assert int(f["config"].attrs["data.vocab"]) == k
code = np.array([chars.index(ch) for ch in text])
cut = len(code) - len(code) // 10
S = f["/data/test_symbols"][...]
n = S.shape[1]
held_text = code[cut:]
for s in S:  # each held-out window lies in the last tenth
    assert any(np.array_equal(held_text[i:i + n], s) for i in range(len(held_text) - n + 1))
tr = code[:cut]
for order in range(1, 5):
    grams, ctx = Counter(), Counter()
    # counts of every context length up to order - 1 (a window's start uses the shorter ones)
    for m in range(order):
        for t in range(m, len(tr)):
            c = tuple(tr[t - m:t])
            grams[c + (tr[t],)] += 1
            ctx[c] += 1
    nll = []
    for s in S:
        for t in range(1, n):
            c = tuple(s[t - min(order - 1, t):t])
            nll.append(-np.log((grams[c + (s[t],)] + 1) / (ctx[c] + k)))
    got = float(f[f"/baselines/{order}-gram"][0])
    assert abs(got - np.mean(nll)) < 1e-12, (order, got, np.mean(nll))
print(f"text: {k} characters, held-out windows from the last tenth, the 1- to 4-gram baselines as recomputed")
PY
  grep -q "bits per symbol" out.txt || fail "the text run does not print bits per symbol"
fi

# Bad inputs: one line naming the key, exit 2, no file.
refused() {
  local key=$1 base=$2
  shift 2
  merge "$base" "$@"
  mft_run 1 train "${merged[@]}" --output.file bad.h5
  if [ "$status" -ne 2 ] || ! grep -q "^mft: error: $key = " err.txt || [ -e bad.h5 ] ||
     [ "$(grep -c . err.txt)" -ne 1 ]; then
    fail "expected one line refusing $key, exit 2, no file; got exit $status: $(cat err.txt)"
  else
    echo "ok: refused: $(cat err.txt)"
  fi
}
none=()
refused model.d chains --model.d 6
refused model.position_dim chains --model.positions one-hot
refused readout.kind none --readout.kind next-token --loss.kind cross-entropy
refused readout.kind none --data.task markov --model.d 20
refused readout.dim chains --readout.dim 7
refused data.tokens words --data.tokens 4000
refused data.vocab words --data.vocab 5
"$PYTHON" -c "import sys; open(sys.argv[1], 'w', encoding='utf-8').write(''.join(chr(0x100 + i) for i in range(300)) * 3)" wide.txt
refused data.file words --data.file wide.txt --model.d 400
printf 'ab\xffcd' >bad.txt
refused data.file words --data.file bad.txt
finish

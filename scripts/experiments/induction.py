#!/usr/bin/env python3
"""The birth of the induction mechanism in the mean-field limit: next-token
prediction on in-context Markov chains.

Task markov (MODEL.md, sequence modelling): every chain has its own 3 x 3
transition matrix, rows Dirichlet(1), n = 32 symbols, the first from the
matrix's stationary law. The best a predictor can do without the matrix is
the in-context bigram (add-1 counts of the transitions seen so far, the
Bayes predictor); the in-context unigram (add-one symbol counts) is the
stage Edelman et al. (2024) see finite transformers pass through first.
The model: tokens [one-hot symbol; sinusoidal position, p = 16], d = 20,
causal softmax attention, d_h = 8, the logits of position t the first three
coordinates of x_t(1); Adam (dtau = 0.003) on 64 fresh chains a step, 2500
steps (tau = 7.5). Sizes: L = 2 slices of M in {4, 8, 16, 32, 64} heads, and
L = 1 slice of M = 32 (the heads of L = 2, M = 16 in one slice; RK4 in
depth, so the one slice's field acts four times on moving tokens with the
same particles). Seeds 1..5: init.seed s, its online stream and 64
validation chains data.seed s + 10, its 256 held-out chains (and the
induction probe) data.test_seed s + 20; every size of a seed sees the same
stream and held-out chains (paired), and M heads are the first M of 64's.

Measured (all on the held-out chains of the seed):
  gap       held-out cross-entropy minus the bigram baseline, mean over the
            last tenth of the run's /history rows;
  tau*      the tau at which the gap first comes down to 0.05 nats, linear
            between the /history rows (every 20 steps: 0.06 in tau) on either
            side (unreached: no row within the run);
  D_u(tau)  the mean over chains and positions of KL(unigram predictor ||
            model), from `mft forward --from` at the snapshots of the
            M = 64 runs (every 20 steps to step 600, then every 380); D_b
            the same to the bigram predictor. The control: the least D_u
            on the geometric path q_lambda ~ bigram^lambda (lambda in
            [0, 1]) from the uniform law to the bigram predictor, on the
            same chains, a model that learns the bigram without a unigram
            stage (0.071 nats on a pilot's chains, at lambda 0.52);
  scores    on the first 8 held-out chains, from the head-averaged
            attention A^l at the tokens entering slice l (`mft forward
            --output.attention`): previous-token = mean over t >= 1 of
            A^l[t, t-1]; statistical induction = mean over the second half
            t >= n/2 of the mass A^l puts on {u <= t : s_{u-1} = s_t}, the
            positions whose previous symbol is the current one (the ones
            whose symbols the bigram counts read). Olsson's exact-copy
            score on the probe (/history induction_score) is bounded far
            below 0.8 at k = 3 by a statistical induction head (each symbol
            recurs about n/6 times in a copy), so it is reported, not
            judged; uniform causal attention gives the statistical score
            about 1/3.

Criteria, stated before the runs (95 % Student-t intervals over the five
seeds, 4 dof; the reference size is L = 2, M = 64, the largest):
  1. the reference reaches the Bayes bigram level: its gap's interval lies
     below 0.02 nats;
  2. a unigram stage: per seed, log(min over tau of D_u / the path's
     least D_u); its interval lies below log 0.5 (the model passes twice
     as close to the unigram predictor as a direct path to the bigram
     predictor can);
  3. the mechanism at the end, on the reference: (a) slice 1's
     previous-token score has its interval above 0.8; (b) slice 2's
     statistical induction score has its interval above 0.8; (c) ablating
     slice 1 (`mft forward --ablate.slices 0`) returns the held-out
     cross-entropy to the unigram level: the ablated CE minus the unigram
     baseline, per seed, has its interval above 0;
  4. the plateau's length converges in M: tau*(64) - tau*(32), paired by
     seed, has its interval inside +-0.1 mean tau*(64) (an unreached tau*
     fails it); the per-seed fits tau*(M) = c + b M^-1/2 are reported;
  5. one weight-tied slice learns the in-context bigram: L = 1, M = 32 has
     its gap's interval below 0.05 (the unigram level is 0.09 above the
     bigram one); its paired difference to L = 2, M = 16 is reported.
Each can fail: 1 if the model stops above the Bayes level or the seeds
scatter; 2 if the model goes to the bigram predictor without passing the
unigram one (the D_u of the path) or the seeds disagree; 3 if the
mechanism is spread over heads (the averaged attention is what the field
applies), or if the first slice does not carry it; 4 if tau* still moves
by more than 10 % from M = 32 to 64; 5 if one slice stays near the
unigram level. For the record (no criterion): a finite PyTorch
transformer with this embedding (2 layers, attention-only, 1 head, Adam
3e-3, 64 chains a step of the same law, its own draws) and its steps to
gap 0.05 on the same held-out chains, where torch is installed.

What was seen before these were stated: the example examples/markov.ini
(M 16, L 2, seed 1, the default data seeds; gap 0.028 at step 1000, 0.011
at 2000, 0.0056 at 3000; probe previous-token score of slice 1 0.22,
exact-copy induction of slice 2 0.05; ablating slice 1: CE 1.125 against
unigram 1.048) and a pilot for the design's power (seeds 101 and 102,
excluded; L = 2 at M 16 and 64, L = 1 at M 32, 1000 steps; M 64 again to
step 400 with snapshots every 20 steps):
  1. the gap over steps 900-1000 at M 64: 0.029, 0.022; the example's
     course puts step 2500 near 0.01, with a seed spread of about 0.005 a
     half-width of about 0.006 (4 dof): the bound 0.02 is resolved either
     way, and the run is 2500 steps to give it the chance (not 2000);
  2. min D_u / the path's least D_u: 0.27, 0.25 (log -1.29, -1.39; the
     minimum at step 180 in both, where the CE is 1.017 against unigram
     1.03): a planned half-width of about 0.09 around -1.3 against the
     bound log 0.5 = -0.69. The criterion was written before the pilot; the
     pilot says it will very likely hold;
  3. the probe's previous-token score of slice 1 at step 1000: 0.17, 0.16
     (the statistical induction score was not measured in the pilot);
  4. tau*(64) 1.56, 1.13 and tau*(16) 1.77, 1.30: paired differences
     -0.21, -0.16 (sd 0.031); under c + b M^-1/2, tau*(64) - tau*(32) is
     0.41 of tau*(64) - tau*(16), about -0.08, with a half-width of about
     0.04 over five seeds, against a band of +-0.1 x 1.35 = +-0.135: it
     can hold, and it fails if the increments do not shrink as M^-1/2;
  5. L = 1, M 32: gap over steps 900-1000 0.043, 0.034 (tau* 2.18,
     1.61), sd 0.0065, a half-width of about 0.008 at 2500 steps.

  python3 scripts/experiments/induction.py [--quick] [--update-docs] [--jobs J]

30 training runs (2500 steps) and 5 x 40 forward passes: about 65
minutes on 2 cores (a step of M = 64 takes 0.24 s, of M = 16 0.063 s, two
runs at once). Writes induction.csv (per configuration: seeds, gap and
tau* with their intervals, how many seeds reached 0.05, the end's scores),
induction-criteria.txt and exp_induction.png (gap against tau per size; tau*
against M^-1/2, seed by seed; D_u and D_b against tau with the
path's least D_u; the previous-token and induction scores against tau).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import numpy as np

import baselines
import common
import finite_peer
import stats
from common import Run

FULL = dict(widths=[4, 8, 16, 32, 64], seeds=[1, 2, 3, 4, 5], steps=2500, every=20, batch=64, validation=64,
            held_out=256, probe=16, tokens=32, position_dim=16, d=20, dtau=3e-3, reference=64, one_slice=(32, 16),
            stage=(600, 20, 380))
QUICK = dict(widths=[2, 4], seeds=[1, 2], steps=30, every=3, batch=16, validation=16, held_out=32, probe=4,
             tokens=16, position_dim=8, d=12, dtau=1e-2, reference=4, one_slice=(4, 2), stage=(15, 3, 6))
VOCAB, ALPHA = finite_peer.VOCAB, finite_peer.ALPHA
DATA_SEED = 10   # data.seed = init.seed + DATA_SEED: the online stream and validation chains
TEST_SEED = 20   # data.test_seed = init.seed + TEST_SEED: the held-out chains and the probe
BAYES = 0.02     # criterion 1: nats above the bigram level
REACHED = 0.05   # tau*, criterion 5: nats above the bigram level
STAGE = 0.5      # criterion 2: min D_u below this fraction of the path's
SCORE = 0.8      # criterion 3: the scores
CONVERGED = 0.1  # criterion 4: |tau*(64) - tau*(32)| within this fraction of tau*(64)
COLUMNS = ["M", "L", "seeds", "diverged", "gap", "gap_low", "gap_high", "tau_star", "tau_star_low", "tau_star_high",
           "reached", "previous_token", "induction", "probe_induction"]


def run_name(M, L, seed):
    return f"M{M}-L{L}-s{seed}"


def configurations(size):
    return [(M, 2) for M in size["widths"]] + [(size["one_slice"][0], 1)]


def train_runs(size):
    sigma = min(1.0, np.sqrt(8.0 / size["d"]))  # mft's auto scales at d_h = 8, written out to be recorded
    runs = []
    for M, L in configurations(size):
        for seed in size["seeds"]:
            staged = (M, L) == (size["reference"], 2)
            runs.append(Run(run_name(M, L, seed), {
                "data.task": "markov", "data.vocab": VOCAB, "data.dirichlet": ALPHA, "data.tokens": size["tokens"],
                "data.online": "true", "data.sequences": size["validation"], "data.seed": seed + DATA_SEED,
                "data.test_sequences": size["held_out"], "data.test_seed": seed + TEST_SEED,
                "data.probe_sequences": size["probe"], "model.d": size["d"], "model.heads": M, "model.slices": L,
                "model.head_dim": 8, "model.causal": "true", "model.attention": "softmax",
                "model.positions": "sinusoidal", "model.position_dim": size["position_dim"],
                "readout.kind": "next-token", "loss.kind": "cross-entropy", "train.method": "adam",
                "train.dtau": size["dtau"], "train.batch": size["batch"], "train.steps": size["steps"],
                "output.history_every": size["every"],
                "output.snapshot_every": size["every"] if staged else size["steps"],
                "init.seed": seed, "init.sigma_qk": 0.5 * sigma, "init.sigma_v": sigma}))
    return runs


def stage_steps(size):
    last, fine, coarse = size["stage"]
    return sorted(set(range(0, last + 1, fine)) | set(range(last, size["steps"] + 1, coarse)))


def forward_runs(paths, size):
    """The forward passes of the finished runs: the end's attention and
    ablations (the reference and the L = 1 / L = 2 pair), and the
    reference's snapshots for D_u and D_b."""
    M1, M2 = size["one_slice"]
    runs = []
    for seed in size["seeds"]:
        for M, L in ((size["reference"], 2), (M1, 1), (M2, 2)):
            name = run_name(M, L, seed)
            if name not in paths:
                continue
            source = {"from": str(paths[name])}
            runs.append(Run(f"{name}-end", {**source, "output.attention": "true", "ablate.slices": "0"},
                            command="forward"))
            if L == 2 and M == size["reference"]:
                runs.append(Run(f"{name}-ablate1", {**source, "ablate.slices": "1"}, command="forward"))
        name = run_name(size["reference"], 2, seed)
        if name in paths:
            run = common.mft_io.open_run(str(paths[name]))
            rows = {int(step): i for i, step in enumerate(run.snapshot_steps)}
            run.close()
            for step in stage_steps(size):
                if step in rows:
                    runs.append(Run(f"{name}-step{step}", {"from": str(paths[name]), "snapshot": rows[step]},
                                    command="forward"))
    return runs


def attention_scores(attention, symbols):
    """(previous-token, statistical induction) per slice from maps (S, L, n,
    n) of the sequences `symbols` (S, n), and the induction score uniform
    causal attention would give."""
    A = np.asarray(attention, float)
    S, L, n, _ = A.shape
    s = np.asarray(symbols)[:S]
    previous = A[:, :, np.arange(1, n), np.arange(n - 1)].mean(axis=(0, 2))
    induction, chance = np.zeros(L), []
    half = range(n // 2, n)
    for i in range(S):
        for t in half:
            match = np.zeros(n, bool)
            match[1:t + 1] = s[i, :t] == s[i, t]
            induction += A[i, :, t, match].sum(axis=0) if match.any() else 0.0
            chance.append(match.sum() / (t + 1))
    return previous, induction / (S * len(half)), float(np.mean(chance))


def forward_of(path):
    """What a forward file holds: the held-out logits (N, n - 1, k), the
    held-out CE, the ablated CE (or None) and the held-out attention maps
    (or None)."""
    import h5py
    with h5py.File(path, "r") as f:
        g = f["forward"]
        logits = g["test_predictions"][...]
        ablated = float(g.attrs["test_risk_ablated"]) if "test_risk_ablated" in g.attrs else None
        attention = g["attention"][...] if "attention" in g else None
        return logits.reshape(len(logits), -1, VOCAB), float(g.attrs["test_risk"]), ablated, attention


def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def tenth(history, steps, key="baseline_gap"):
    step = np.asarray(history["step"])
    return float(np.asarray(history[key])[step > 0.9 * steps].mean())


def first_reached(history, level=REACHED):
    """The tau at which the gap first comes down to `level`: linear between
    the /history row before and the first row at or below it (NaN if no
    row is)."""
    tau, gap = np.asarray(history["tau"], float), np.asarray(history["baseline_gap"], float)
    hit = np.flatnonzero(gap <= level)
    if not hit.size:
        return np.nan
    j = hit[0]
    if j == 0:
        return float(tau[0])
    return float(tau[j - 1] + (tau[j] - tau[j - 1]) * (gap[j - 1] - level) / (gap[j - 1] - gap[j]))


def measure(paths, forwards, size):
    """{configuration: {seed: values}} of the runs that finished, and the
    sanity checks' largest differences."""
    M1, M2 = size["one_slice"]
    found, checks = {c: {} for c in configurations(size)}, dict(baselines=0.0, logits=0.0, end=0.0)
    for c in configurations(size):
        for seed in size["seeds"]:
            name = run_name(*c, seed)
            if name not in paths:
                continue
            h, _ = common.history(paths[name])
            run = common.mft_io.open_run(str(paths[name]))
            symbols, base = run.test_symbols, run.baselines
            run.close()
            v = dict(history=h, gap=tenth(h, size["steps"]), tau_star=first_reached(h), base=base,
                     probe_previous=np.asarray(h["previous_token_score"])[-1],
                     probe_induction=np.asarray(h["induction_score"])[-1], files=[paths[name]])
            found[c][seed] = v
            if f"{name}-end" in forwards:
                v["files"].append(forwards[f"{name}-end"])
                logits, ce, ablated, A = forward_of(forwards[f"{name}-end"])
                v["previous"], v["induction"], v["chance"] = attention_scores(A, symbols)
                v["ablated"] = ablated
                checks["end"] = max(checks["end"], abs(ce - float(np.asarray(h["test_risk"])[-1])))
            if c != (size["reference"], 2):
                continue
            if f"{name}-ablate1" in forwards:
                v["ablated1"] = forward_of(forwards[f"{name}-ablate1"])[2]
            unigram, bigram = baselines.in_context_predictors(symbols, VOCAB, ALPHA)
            checks["baselines"] = max(checks["baselines"],
                                      abs(baselines.mean_cross_entropy(unigram, symbols) - base["unigram"]),
                                      abs(baselines.mean_cross_entropy(bigram, symbols) - base["bigram"]))
            v["path"] = baselines.path_min_kl(unigram, bigram)
            curve = []
            for step in stage_steps(size):
                key = f"{name}-step{step}"
                if key not in forwards:
                    continue
                logits, ce, _, _ = forward_of(forwards[key])
                q = softmax(logits)
                checks["logits"] = max(checks["logits"], abs(baselines.mean_cross_entropy(q, symbols) - ce))
                curve.append((step * size["dtau"], baselines.mean_kl(unigram, q), baselines.mean_kl(bigram, q), ce))
            v["stage"] = np.array(curve)
    return found, checks


def interval(values):
    values = [x for x in values if np.isfinite(x)]
    return stats.t_interval(values) if len(values) >= 2 else None


def table(found, size):
    rows = {}
    for (M, L), seeds in found.items():
        last = size["reference"] if (M, L) == (size["reference"], 2) else None
        rows[(M, L)] = dict(
            M=M, L=L, seeds=len(size["seeds"]), diverged=len(size["seeds"]) - len(seeds),
            gap=interval([v["gap"] for v in seeds.values()]),
            tau_star=interval([v["tau_star"] for v in seeds.values()]),
            reached=sum(np.isfinite(v["tau_star"]) for v in seeds.values()),
            previous_token=np.mean([v["previous"][0] for v in seeds.values() if "previous" in v] or [np.nan]),
            induction=np.mean([v["induction"][-1] for v in seeds.values() if "induction" in v] or [np.nan]),
            probe_induction=np.mean([v["probe_induction"][-1] for v in seeds.values()] or [np.nan]),
            reference=last is not None, runs=[p for v in seeds.values() for p in v["files"]])
    return rows


def csv_rows(rows):
    out = []
    for r in rows.values():
        row = {k: r[k] for k in ("M", "L", "seeds", "diverged", "reached", "previous_token", "induction",
                                 "probe_induction", "runs")}
        for key in ("gap", "tau_star"):
            i = r[key]
            row[key], row[key + "_low"], row[key + "_high"] = (i.value, i.low, i.high) if i else (np.nan,) * 3
        out.append(row)
    return out


def fmt_list(values, digits=4):
    return ", ".join(f"{x:.{digits}g}" for x in values)


def criteria(found, rows, checks, size):
    ref = found[(size["reference"], 2)]
    seeds = sorted(ref)
    reference = f"L = 2, M = {size['reference']}"
    lines = [f"sanity: the driver's in-context unigram and bigram predictors give the run files' /baselines to "
             f"{checks['baselines']:.1e} nats; the cross-entropy of the forward passes' logits equals their "
             f"test_risk to {checks['logits']:.1e}; each end's forward equals its run's last held-out CE to "
             f"{checks['end']:.1e}"]
    print(lines[-1])

    gap = rows[(size["reference"], 2)]["gap"]
    lines.append(common.criterion(
        f"{reference} reaches the Bayes bigram level (held-out CE minus the bigram baseline over the last tenth, "
        f"interval below {BAYES:g} nats)", gap is not None and gap.below(BAYES),
        f"{gap.text(4)}; seeds {fmt_list([ref[s]['gap'] for s in seeds])}" if gap else "fewer than two seeds"))

    staged = [s for s in seeds if len(ref[s].get("stage", [])) and np.isfinite(ref[s]["path"][0])]
    ratio = [float(ref[s]["stage"][:, 1].min() / ref[s]["path"][0]) for s in staged]
    i = interval(np.log(ratio)) if ratio else None
    lines.append(common.criterion(
        f"a unigram stage ({reference}): log(min over tau of KL(unigram || model) / the least KL on the geometric "
        f"path from uniform to the bigram predictor), per seed, interval below log {STAGE:g}",
        i is not None and i.below(np.log(STAGE)),
        f"{i.text()} vs {np.log(STAGE):.4f}; ratios {fmt_list(ratio, 3)}; min D_u "
        f"{fmt_list([ref[s]['stage'][:, 1].min() for s in staged], 3)} at tau "
        f"{fmt_list([ref[s]['stage'][np.argmin(ref[s]['stage'][:, 1]), 0] for s in staged], 3)}; path "
        f"{fmt_list([ref[s]['path'][0] for s in staged], 3)} at lambda "
        f"{fmt_list([ref[s]['path'][1] for s in staged], 3)}" if i else "fewer than two seeds"))

    for label, key, index in (("slice 1's previous-token score", "previous", 0),
                              ("the last slice's statistical induction score", "induction", -1)):
        values = [ref[s][key][index] for s in seeds if key in ref[s]]
        i = interval(values)
        chance = f"; uniform causal attention {np.mean([ref[s]['chance'] for s in seeds if 'chance' in ref[s]]):.3f}" \
            if key == "induction" and values else ""
        lines.append(common.criterion(
            f"the mechanism ({reference}, the first 8 held-out chains at the end): {label} has its interval above "
            f"{SCORE:g}", i is not None and i.above(SCORE),
            f"{i.text(3)}{chance}; seeds {fmt_list(values, 3)}" if i else "fewer than two seeds"))

    pairs = [s for s in seeds if ref[s].get("ablated") is not None]
    d = stats.paired([ref[s]["ablated"] for s in pairs], [ref[s]["base"]["unigram"] for s in pairs]) \
        if len(pairs) >= 2 else None
    lines.append(common.criterion(
        f"ablating slice 1 ({reference}) returns the held-out CE to the unigram level (ablated CE minus the unigram "
        "baseline, paired by seed, interval above 0)", d is not None and d.above(0.0),
        f"{d.text(4)}; ablated {fmt_list([ref[s]['ablated'] for s in pairs])}, unablated "
        f"{fmt_list([ref[s]['history']['test_risk'][-1] for s in pairs])}, unigram "
        f"{fmt_list([ref[s]['base']['unigram'] for s in pairs])}; slice 2 ablated "
        f"{fmt_list([ref[s].get('ablated1', np.nan) for s in pairs])}" if d else "fewer than two seeds"))

    widths = size["widths"]
    big, small = widths[-1], widths[-2]
    tau = {M: [found[(M, 2)].get(s, {}).get("tau_star", np.nan) for s in seeds] for M in widths}
    both = [j for j, _ in enumerate(seeds) if np.isfinite(tau[big][j]) and np.isfinite(tau[small][j])]
    d = stats.paired([tau[big][j] for j in both], [tau[small][j] for j in both]) if len(both) >= 2 else None
    unreached = sum(not np.isfinite(tau[M][j]) for M in (big, small) for j in range(len(seeds)))
    band = CONVERGED * np.nanmean(tau[big]) if np.isfinite(tau[big]).any() else np.nan
    holds = d is not None and unreached == 0 and -band <= d.low and d.high <= band
    lines.append(common.criterion(
        f"the plateau's length converges in M: tau*({big}) - tau*({small}) (the first tau with gap <= {REACHED:g}), "
        f"paired by seed, interval inside +-{CONVERGED:g} mean tau*({big})", holds,
        (f"{d.text(3)} vs +-{band:.3f}; " if d else "fewer than two seeds reached both; ")
        + "; ".join(f"tau*({M}) {fmt_list(tau[M], 3)}" for M in widths) + f"; {unreached} unreached"))
    done = [j for j in range(len(seeds)) if all(np.isfinite(tau[M][j]) for M in widths)]
    if len(done) >= 2 and len(widths) >= 3:
        fit = stats.per_seed_fits([np.ones(len(widths)), np.asarray(widths, float) ** -0.5],
                                  [[tau[M][j] for M in widths] for j in done], ("c", "b"))
        lines.append(f"measured: per-seed fits tau*(M) = c + b M^-1/2 over M = {fmt_list(widths)} "
                     f"({len(done)} seeds): c {fit['c'].text(3)}, b {fit['b'].text(3)}")
    else:
        lines.append(f"measured: no per-seed fit of tau*(M): {len(done)} seeds reached gap {REACHED:g} at every M")
    print(lines[-1])

    M1, M2 = size["one_slice"]
    one, two = found[(M1, 1)], found[(M2, 2)]
    gap = rows[(M1, 1)]["gap"]
    lines.append(common.criterion(
        f"one weight-tied slice learns the in-context bigram: L = 1, M = {M1} has its gap's interval below "
        f"{REACHED:g} nats", gap is not None and gap.below(REACHED),
        f"{gap.text(4)}; seeds {fmt_list([one[s]['gap'] for s in sorted(one)])}" if gap else "fewer than two seeds"))
    common_seeds = [s for s in seeds if s in one and s in two]
    if len(common_seeds) >= 2:
        d = stats.paired([one[s]["gap"] for s in common_seeds], [two[s]["gap"] for s in common_seeds])
        scores = [f"{name} previous-token {fmt_list([v[s]['previous'][0] for s in common_seeds if 'previous' in v[s]], 3)}"
                  f", induction (last slice) {fmt_list([v[s]['induction'][-1] for s in common_seeds if 'induction' in v[s]], 3)}"
                  for name, v in (("L = 1:", one), (f"L = 2, M = {M2}:", two))]
        lines.append(f"measured: gap of L = 1, M = {M1} minus L = 2, M = {M2}, paired by seed: {d.text(4)}; "
                     + "; ".join(scores))
        print(lines[-1])
    return lines


def main():
    import induction_figure  # imports this driver: here, not at the top, so that importing it stays acyclic
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "induction", "`mft forward`")
    size = QUICK if options.quick else FULL
    runs = train_runs(size)
    print(f"[induction] {len(runs)} training runs of {size['steps']} steps, then their forward passes; the full mode "
          "takes about 65 minutes on 2 cores", flush=True)
    paths = common.execute("induction", runs, options)
    forwards = common.execute("induction", forward_runs(paths, size), options)
    found, checks = measure(paths, forwards, size)
    for c, seeds in found.items():
        for seed, v in seeds.items():
            v["path"] = v.get("path", (np.nan, np.nan))
            v["run"] = paths[run_name(*c, seed)]
    rows = table(found, size)
    common.write_csv("induction", options, COLUMNS, csv_rows(rows))
    for c, r in rows.items():
        gap = r["gap"].text(4) if r["gap"] else "-"
        tau = r["tau_star"].text(3) if r["tau_star"] else "-"
        print(f"M {c[0]:3} L {c[1]}: gap {gap}; tau* {tau} ({r['reached']} of {r['seeds']} reached); end scores: "
              f"previous-token {r['previous_token']:.3f}, statistical induction {r['induction']:.3f}, probe "
              f"exact-copy induction {r['probe_induction']:.3f}")
    lines = criteria(found, rows, checks, size)
    lines.append(finite_peer.record(found, size, REACHED) if not options.quick else "measured: the PyTorch peer runs in the full mode alone")
    print(lines[-1])
    common.write_criteria("induction", options, lines)
    induction_figure.figure(found, rows, size, options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

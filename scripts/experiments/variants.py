#!/usr/bin/env python3
"""Score maps compared fairly: softmax against ReLU scores (max(a, 0) / n)
on in-context linear regression. A ReLU kernel is a softmax kernel times
a global scale and more, so the comparison normalises it away: each run's
step is dtau = c N / tr(K_all(0)), one c for all, so every map's kernel has
the same trace per step (c keeps every run inside the linearised flow's
stability limit, dtau lambda_max(K_all) / N <= 1/4, and softmax's dtau at
most 0.05), and the runs are compared at equal steps (equal normalised
time). The Q, K scale sigma_qk must make softmax attention far from
uniform: the attention entropy of the first slice's heads on the input
tokens, over log n, is measured.

Setting: N = 32, M = 32, L = 4, sigma_qk in {0.3, 0.5}, seeds 1..16, 300
Euler steps; K_all and K_V at initialisation (`mft ntk`). The design is
paired by seed: seed s draws the particles (init.seed = s; the particle
streams do not depend on the score map, so both maps start from the same
particles) and the training set (data.seed = s + 10, each seed its own),
and both maps train on them. The maps are compared seed by seed on the
logs (the final R spans orders of magnitude over the seeds, so a mean of
R is one seed's): per seed d_R = log R_softmax - log R_relu at the last
step and d_K = log(lambda_min/tr)_softmax - log(lambda_min/tr)_relu of
K_all(0), each with its 95 % Student-t interval over the seeds
(stats.paired, 15 dof with sixteen). A seed whose run diverged drops out
of the pairs and is counted.

Where a run ends, by the drivers' rule (common.py): the line fitted to log
R against tau over the last fifth of the run gives R's relative change c
over that fifth; "plateau" when |c| < 5 %, else "still falling" or
"rising". The
runs stop at a fixed number of steps, not at a plateau: where both maps
still fall, the comparison is of how far each got in equal normalised
time (a rate), not of where each ends, and the criterion line says so.

Criteria, stated before the runs, at each sigma_qk:
  1. softmax attention is not uniform: every seed's entropy / log n
     (at the drawn particles) is under 0.9; its t-interval over the seeds
     is quoted;
  2. the better-conditioned map ends at the lower R: d_K's interval
     excludes 0 (the map with the larger lambda_min(K_all)/tr(K_all) is
     resolved) and d_R's interval lies on the other side of 0 (that map's
     R is lower, paired by seed).
(2) fails three ways, each named on its line: the other map ends lower
(d_R's interval on the same side as d_K's), no difference resolved (d_R's
interval contains 0: this counts against a claim of difference), or the
conditioning is not resolved (d_K's interval contains 0); and if the
better-conditioned map diverged in a seed. (1) fails if a seed's softmax
is nearly uniform.

What was seen before these were stated: the earlier design's results
(three seeds sharing one training set, compared on mean +- SE of R):
entropy / log n 0.66 and 0.30 at sigma_qk 0.3 and 0.5; lambda_min/tr
3.0e-3 (softmax) against 1.7e-3 (relu) at 0.3 and 6.5e-3 against 1.5e-3 at
0.5; R at step 300 2.96e-6 +- 2.7e-6 against 3.39e-5 +- 3.0e-6 at 0.3 and
3.11e-4 +- 1.6e-4 against 3.32e-4 +- 4.5e-5 at 0.5; dtau 0.015-0.066.
One full-size pair for the cost (sigma_qk 0.3, seed 1, data.seed 11, c
from that pair's kernels alone): dtau 0.05 (softmax, at the cap) and 0.107
(relu); lambda_min/tr 3.8e-3 and 2.5e-3; R 0.48 -> 1.9e-8 and 0.49 ->
2.3e-6 at step 300, both still falling (c -94 % and -77 % over the last
fifth); 0.043 s a step on one of the 2 cores shared with another sweep,
0.7 s a kernel. Sixteen seeds rather than five: the seed spread of log R
is unknown before the run, and the cost allows them. And the quick mode's
output (tiny models, 10 steps: its numbers mean nothing).

  python3 scripts/experiments/variants.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft ntk` runs). 64 training runs and 128 kernels: at the
pilot's rates about 8 minutes on 2 cores (--jobs 2), 15 if both cores are
shared. Writes variants.csv (per sigma_qk the two maps, over
the seeds: the entropy with its interval, the kernels' mean extreme
eigenvalues and trace, lambda_min/tr as a geometric mean with its interval,
dtau, the final R and R_final / R_0 as geometric means with their
intervals, the runs' endings; and a row "softmax/relu": the same ratios
paired by seed, exp of d_K and d_R with their intervals) and
exp_variants.png (R against the step; the per-seed differences d_K and d_R
with their intervals).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import numpy as np

import common
import stats
from common import Run

FULL = dict(seeds=list(range(1, 17)), M=32, L=4, N=32, steps=300, sigmas=[0.3, 0.5], cap=0.05)
QUICK = dict(seeds=[1, 2], M=4, L=2, N=8, steps=10, sigmas=[0.2, 0.3], cap=0.05)
MAPS = ("softmax", "relu")
PAIR = "softmax/relu"
DATA_SEED = 10     # data.seed = init.seed + DATA_SEED: each seed its own training set, shared by both maps
UNIFORM = 0.9      # criterion 1: entropy / log n under this at every seed
COLUMNS = ["attention", "sigma_qk", "seeds", "diverged", "entropy", "entropy_low", "entropy_high", "all_min",
           "all_max", "all_trace", "V_min", "V_max", "conditioning", "conditioning_low", "conditioning_high", "dtau",
           "risk", "risk_low", "risk_high", "reduction", "reduction_low", "reduction_high", "ending"]


def attention_entropy(path):
    """Mean over the first slice's heads, the tokens and the sequences of the
    entropy of softmax(<Q x_i, K x_j>) over j, divided by log n (1: uniform),
    at the run's first snapshot."""
    run = common.mft_io.open_run(str(path))
    p = run.particles(0)
    run.close()
    import h5py
    with h5py.File(path, "r") as f:
        X = f["data/tokens"][()]
    values = []
    for Q, K in zip(p["Q"][0], p["K"][0]):
        a = np.einsum("sih,sjh->sij", X @ Q.T, X @ K.T)
        a -= a.max(axis=-1, keepdims=True)
        P = np.exp(a)
        P /= P.sum(axis=-1, keepdims=True)
        values.append(float(np.mean(-np.sum(P * np.log(np.maximum(P, 1e-300)), axis=-1))))
    return float(np.mean(values) / np.log(X.shape[1]))


def fmt(iv):
    return iv.text() if iv is not None else "fewer than two seeds"


def geometric(iv):
    """exp of a log-scale interval: (value, low, high), NaN without one."""
    return tuple(np.exp([iv.value, iv.low, iv.high])) if iv is not None else (np.nan,) * 3


def paired_logs(per, sigma, key, seeds):
    """The t-interval of log(softmax) - log(relu) of `key` paired by seed,
    over the seeds where both runs have it, or None with fewer than two."""
    both = [s for s in seeds if key in per[("softmax", sigma, s)] and key in per[("relu", sigma, s)]]
    if len(both) < 2:
        return None
    return stats.paired([np.log(per[("softmax", sigma, s)][key]) for s in both],
                        [np.log(per[("relu", sigma, s)][key]) for s in both])


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "variants")
    size = QUICK if options.quick else FULL
    import h5py

    def base(attention, sigma, seed):
        return {"data.task": "icl-linear", "data.sequences": size["N"], "data.seed": seed + DATA_SEED,
                "init.sigma_v": 0.5, "init.sigma_qk": sigma, "model.attention": attention, "model.heads": size["M"],
                "model.slices": size["L"], "init.seed": seed}

    cases = [(a, s, seed) for s in size["sigmas"] for a in MAPS for seed in size["seeds"]]
    tag = {c: f"{c[0]}-qk{c[1]:g}-s{c[2]}" for c in cases}
    if not options.quick:
        print(f"[variants] {len(cases)} training runs of {size['steps']} steps and {2 * len(cases)} kernels; the "
              "full mode takes about 8 minutes on 2 cores", flush=True)
    kernels = [Run(f"{tag[c]}-ntk{part}", {**base(*c), "ntk.part": part}, command="ntk")
               for c in cases for part in ("all", "V")]
    paths = common.execute("variants", kernels, options)
    lam = {}
    for c in cases:
        for part in ("all", "V"):
            with h5py.File(paths[f"{tag[c]}-ntk{part}"], "r") as f:
                ev = f["ntk/eigenvalues"][()]
                lam[(c, part)] = (float(ev[0]), float(ev[-1]), float(ev.sum()))
    # One c: dtau = c N / tr(K); the largest c with every run's dtau lambda_max / N <= 1/4 and
    # softmax's dtau at most `cap`.
    trace = {c: lam[(c, "all")][2] for c in cases}
    c_all = min(trace[c] / (4 * lam[(c, "all")][1]) for c in cases)
    c_all = min(c_all, min(size["cap"] * trace[c] / size["N"] for c in cases if c[0] == "softmax"))
    dtau = {c: float(f"{c_all * size['N'] / trace[c]:.3g}") for c in cases}
    train = [Run(f"{tag[c]}-train", {**base(*c), "train.steps": size["steps"], "train.dtau": dtau[c],
                                     "output.snapshot_every": size["steps"]}) for c in cases]
    paths.update(common.execute("variants", train, options))

    # per[case]: what its kernel and (when it finished) its run measured.
    per, curves = {}, {}
    for c in cases:
        per[c] = {"conditioning": lam[(c, "all")][0] / trace[c]}
        name = f"{tag[c]}-train"
        if name not in paths:
            continue
        h, _ = common.history(paths[name])
        curves[c] = h
        per[c].update({"risk": float(h["risk"][-1]), "reduction": float(h["risk"][-1] / h["risk"][0]),
                       "ending": common.run_ending(h)})
        if c[0] == "softmax":
            per[c]["entropy"] = attention_entropy(paths[name])
    rows = table(per, lam, trace, dtau, size, paths, tag)
    common.write_csv("variants", options, COLUMNS, rows)
    for r in rows:
        print(f"sigma_qk {r['sigma_qk']:g} {r['attention']:12} lambda_min/tr {r['conditioning']:.3e} "
              f"[{r['conditioning_low']:.3e}, {r['conditioning_high']:.3e}], R {r['risk']:.3e} "
              f"[{r['risk_low']:.3e}, {r['risk_high']:.3e}]" + (f", {r['ending']}" if r["ending"] else ""))
    common.write_criteria("variants", options, criteria(per, size))
    plot(per, curves, size, options)


def table(per, lam, trace, dtau, size, paths, tag):
    """Per sigma_qk a row per map (geometric means over its seeds) and the
    paired row softmax/relu; each row names the run files it reads."""
    def files(cases):
        return [paths[f"{tag[c]}-{kind}"] for c in cases for kind in ("ntkall", "ntkV", "train")
                if f"{tag[c]}-{kind}" in paths]
    rows = []
    for sigma in size["sigmas"]:
        for attention in MAPS:
            mine = [(attention, sigma, s) for s in size["seeds"]]
            done = [c for c in mine if "risk" in per[c]]
            log_iv = {k: stats.finite_interval([np.log(per[c][k]) for c in mine if k in per[c]])
                      for k in ("conditioning", "risk", "reduction")}
            entropy = stats.finite_interval([per[c].get("entropy", np.nan) for c in mine])
            row = {"attention": attention, "sigma_qk": sigma, "seeds": len(mine), "diverged": len(mine) - len(done),
                   "entropy": entropy.value if entropy else np.nan,
                   "entropy_low": entropy.low if entropy else np.nan,
                   "entropy_high": entropy.high if entropy else np.nan,
                   "all_min": np.mean([lam[(c, "all")][0] for c in mine]),
                   "all_max": np.mean([lam[(c, "all")][1] for c in mine]),
                   "all_trace": np.mean([trace[c] for c in mine]),
                   "V_min": np.mean([lam[(c, "V")][0] for c in mine]),
                   "V_max": np.mean([lam[(c, "V")][1] for c in mine]),
                   "dtau": np.mean([dtau[c] for c in mine]),
                   "ending": common.endings_text([per[c]["ending"] for c in done]), "runs": files(mine)}
            for key, iv in log_iv.items():
                row[key], row[key + "_low"], row[key + "_high"] = geometric(iv)
            rows.append(row)
        pair = {"attention": PAIR, "sigma_qk": sigma, "seeds": len(size["seeds"]),
                "diverged": sum(any("risk" not in per[(a, sigma, s)] for a in MAPS) for s in size["seeds"]),
                "ending": "", "runs": files([(a, sigma, s) for a in MAPS for s in size["seeds"]])}
        for key in ("entropy", "all_min", "all_max", "all_trace", "V_min", "V_max", "dtau"):
            pair[key] = np.nan
        pair["entropy_low"] = pair["entropy_high"] = np.nan
        for key in ("conditioning", "risk", "reduction"):
            pair[key], pair[key + "_low"], pair[key + "_high"] = geometric(paired_logs(per, sigma, key, size["seeds"]))
        rows.append(pair)
    return rows


def outcome(d_K, d_R, diverged):
    """The verdict of criterion 2 and its reason; a map with a diverged seed
    does not end lower."""
    if d_K is None or d_R is None:
        return False, "fewer than two pairs"
    if d_K.contains(0.0):
        return False, "conditioning not resolved"
    better = "softmax" if d_K.above(0.0) else "relu"
    if d_R.contains(0.0):
        return False, f"no difference in R resolved ({better} better conditioned)"
    lower = "softmax" if d_R.below(0.0) else "relu"
    if lower == better and diverged[better]:
        return False, f"{lower} ends lower in the pairs, but diverged in {diverged[better]} seeds"
    return lower == better, f"{lower} ends lower, {better} better conditioned"


def criteria(per, size):
    lines, seeds = [], size["seeds"]
    for sigma in size["sigmas"]:
        entropy = [per[("softmax", sigma, s)].get("entropy", np.nan) for s in seeds]
        measured = [e for e in entropy if np.isfinite(e)]
        lines.append(common.criterion(
            f"sigma_qk {sigma:g}: softmax attention is not uniform (every seed's entropy / log n < {UNIFORM:g})",
            len(measured) == len(seeds) and max(measured) < UNIFORM,
            f"{len(measured)} of {len(seeds)} seeds measured, largest {max(measured, default=np.nan):.3f}; "
            f"entropy / log n {fmt(stats.finite_interval(measured))}"))
        d_K, d_R = (paired_logs(per, sigma, key, seeds) for key in ("conditioning", "risk"))
        ends = {a: [per[(a, sigma, s)]["ending"] for s in seeds if "ending" in per[(a, sigma, s)]] for a in MAPS}
        diverged = {a: sum("risk" not in per[(a, sigma, s)] for s in seeds) for a in MAPS}
        holds, reason = outcome(d_K, d_R, diverged)
        falling = all(e == "still falling" for a in MAPS for e in ends[a])
        lines.append(common.criterion(
            f"sigma_qk {sigma:g}: the map with the larger lambda_min(K_all)/tr(K_all) ends at the lower R after "
            f"{size['steps']} steps (log softmax - log relu, paired by seed: the two intervals on opposite sides "
            "of 0)", holds,
            f"{reason}; d_K {fmt(d_K)}; d_R {fmt(d_R)}, R_softmax / R_relu x{geometric(d_R)[0]:.3g}; endings: "
            + "; ".join(f"{a} {common.endings_text(ends[a]) or 'none'}"
                        + (f", {diverged[a]} diverged" if diverged[a] else "") for a in MAPS)
            + ("; compared while every run still falls (a rate in equal normalised time)" if falling else "")))
    return lines


def plot(per, curves, size, options):
    """R against the step (the same normalised time for every run), a panel
    per sigma_qk, diverged runs marked; and the per-seed paired differences
    d_K and d_R with their intervals."""
    plt = common.pyplot()
    sigmas, seeds = size["sigmas"], size["seeds"]
    fig, axes = plt.subplots(1, len(sigmas) + 1, figsize=(4 * (len(sigmas) + 1), 3.8))
    for ax, sigma in zip(axes, sigmas):
        for i, attention in enumerate(MAPS):
            done = [curves[(attention, sigma, s)] for s in seeds if (attention, sigma, s) in curves]
            for k, h in enumerate(done):
                ax.semilogy(h["step"], h["risk"], color=f"C{i}", lw=0.8, alpha=0.7, label=attention if k == 0 else None)
            if len(done) < len(seeds):
                ax.plot([], [], "x", color=f"C{i}", label=f"{attention}: {len(seeds) - len(done)} diverged")
        ax.set_title(f"σ_qk = {sigma:g}, {len(seeds)} seeds", fontsize=9)
        ax.set_xlabel("step (dτ ∝ 1/tr K_all(0))")
        ax.set_ylabel("risk R")
    ax = axes[-1]
    labels, x = [], 0
    for sigma in sigmas:
        for j, (key, name) in enumerate((("conditioning", "d_K"), ("risk", "d_R"))):
            both = [s for s in seeds if key in per[("softmax", sigma, s)] and key in per[("relu", sigma, s)]]
            d = [np.log(per[("softmax", sigma, s)][key] / per[("relu", sigma, s)][key]) for s in both]
            ax.plot(x + np.linspace(-0.15, 0.15, len(d)), d, ".", color="0.5", ms=4,
                    label="a seed" if x == 0 else None)
            iv = paired_logs(per, sigma, key, seeds)
            if iv is not None:
                ax.errorbar(x + 0.3, iv.value, yerr=[[iv.value - iv.low], [iv.high - iv.value]], marker="o",
                            capsize=3, color=f"C{2 + j}", label=f"{name} ({iv.label()})" if x < 2 else None)
            labels.append(f"{name}\nσ {sigma:g}")
            x += 1
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("log softmax − log relu, paired by seed")
    ax.set_title("d_K: λ_min/tr of K_all(0); d_R: R at the last step", fontsize=8)
    common.finish_axes(axes)
    common.save_figure(fig, "variants", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

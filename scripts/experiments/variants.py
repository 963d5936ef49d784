#!/usr/bin/env python3
"""Score maps compared fairly: softmax against ReLU scores (max(a, 0) / n)
on in-context linear regression. A ReLU kernel is a softmax kernel times
a global scale and more, so the comparison normalises it away: each run's
step is dtau = c N / tr(K_all(0)), one c for all, so every map's kernel has
the same trace per step (c keeps every run inside the linearised flow's
stability limit, dtau lambda_max(K_all) / N <= 1/4), and the runs are
compared at equal steps (equal normalised time). The Q, K scale sigma_qk
must make softmax attention far from uniform: the attention entropy of the
first slice's heads on the input tokens, over log n, is measured.

Setting: N = 32, M = 32, L = 4, sigma_qk in {0.3, 0.5}, three seeds, 300
Euler steps; K_all and K_V at initialisation (`mft ntk`). Runs that diverge
are counted and drawn where they stopped.

Criteria, stated before the runs, at each sigma_qk:
  1. softmax attention is not uniform: mean normalised entropy < 0.9;
  2. the map with the larger lambda_min(K_all) / tr(K_all) at initialisation
     (the normalised kernel's smallest eigenvalue) ends at the lower mean R
     (a map with a diverged seed does not).

  python3 scripts/experiments/variants.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft ntk` runs). About 10 minutes on 2 cores. Writes
variants.csv (attention, sigma_qk, seeds, diverged, the entropy, the
kernels' extreme eigenvalues and trace, dtau, final R and its standard
error, R_final / R_0) and exp_variants.png.
"""
import numpy as np

import common
from common import Run

FULL = dict(seeds=[1, 2, 3], M=32, L=4, N=32, steps=300, sigmas=[0.3, 0.5], cap=0.05)
QUICK = dict(seeds=[1], M=4, L=2, N=8, steps=10, sigmas=[0.2, 0.3], cap=0.05)
MAPS = ("softmax", "relu")
COLUMNS = ["attention", "sigma_qk", "seeds", "diverged", "entropy", "all_min", "all_max", "all_trace", "V_min",
           "V_max", "dtau", "risk", "risk_err", "reduction"]


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


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "variants")
    size = QUICK if options.quick else FULL
    import h5py

    def base(attention, sigma, seed):
        return {"data.task": "icl-linear", "data.sequences": size["N"], "init.sigma_v": 0.5, "init.sigma_qk": sigma,
                "model.attention": attention, "model.heads": size["M"], "model.slices": size["L"],
                "init.seed": seed}

    cases = [(a, s, seed) for s in size["sigmas"] for a in MAPS for seed in size["seeds"]]
    tag = {c: f"{c[0]}-qk{c[1]:g}-s{c[2]}" for c in cases}
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

    rows, curves = [], {}
    for sigma in size["sigmas"]:
        for attention in MAPS:
            mine = [c for c in cases if c[0] == attention and c[1] == sigma]
            final, ratio, entropy = [], [], []
            for c in mine:
                name = f"{tag[c]}-train"
                if name in paths:
                    h, _ = common.history(paths[name])
                    final.append(float(h["risk"][-1]))
                    ratio.append(float(h["risk"][-1] / h["risk"][0]))
                    curves[c] = h
                    if attention == "softmax":
                        entropy.append(attention_entropy(paths[name]))
                else:
                    curves[c] = None
            r, r_err = common.mean_and_error(final) if final else (np.nan, np.nan)
            rows.append({"attention": attention, "sigma_qk": sigma, "seeds": len(mine), "diverged": len(mine) - len(final),
                         "entropy": float(np.mean(entropy)) if entropy else np.nan,
                         "all_min": np.mean([lam[(c, "all")][0] for c in mine]),
                         "all_max": np.mean([lam[(c, "all")][1] for c in mine]),
                         "all_trace": np.mean([trace[c] for c in mine]),
                         "V_min": np.mean([lam[(c, "V")][0] for c in mine]),
                         "V_max": np.mean([lam[(c, "V")][1] for c in mine]),
                         "dtau": np.mean([dtau[c] for c in mine]), "risk": r, "risk_err": r_err,
                         "reduction": float(np.mean(ratio)) if ratio else np.nan})
    common.write_csv("variants", options, COLUMNS, rows)
    plot(rows, curves, size, options)

    lines = []
    for sigma in size["sigmas"]:
        soft, relu = (next(r for r in rows if r["attention"] == a and r["sigma_qk"] == sigma) for a in MAPS)
        lines.append(common.criterion(f"sigma_qk {sigma:g}: softmax attention is not uniform (entropy / log n < 0.9)",
                                      soft["entropy"] < 0.9, f"entropy / log n {soft['entropy']:.3f}"))
        norm = {r["attention"]: r["all_min"] / r["all_trace"] for r in (soft, relu)}
        predicted = max(norm, key=norm.get)
        # A map with a diverged seed cannot end lower.
        done = [r for r in (soft, relu) if np.isfinite(r["risk"]) and not r["diverged"]]
        lower = min(done, key=lambda r: r["risk"])["attention"] if done else None
        lines.append(common.criterion(
            f"sigma_qk {sigma:g}: the map with the larger lambda_min(K_all)/tr(K_all) ends at the lower R",
            lower == predicted,
            "; ".join(f"{r['attention']}: lambda_min/tr {norm[r['attention']]:.3e}, R {r['risk']:.3e} +- "
                      f"{r['risk_err']:.1e}" + (f", {r['diverged']} of {r['seeds']} diverged" if r["diverged"] else "")
                      for r in (soft, relu))))
    common.write_criteria("variants", options, lines)


def plot(rows, curves, size, options):
    """R against the step (the same normalised time for every run), a panel
    per sigma_qk, diverged runs marked where they stopped; and the kernels'
    normalised smallest eigenvalues."""
    plt = common.pyplot()
    fig, axes = plt.subplots(1, len(size["sigmas"]) + 1, figsize=(4 * (len(size["sigmas"]) + 1), 3.6))
    for ax, sigma in zip(axes, size["sigmas"]):
        for i, attention in enumerate(MAPS):
            done = [curves[(attention, sigma, seed)] for seed in size["seeds"] if curves.get((attention, sigma, seed))]
            for k, h in enumerate(done):
                ax.semilogy(h["step"], h["risk"], color=f"C{i}", lw=1, label=attention if k == 0 else None)
            if len(done) < len(size["seeds"]):
                ax.plot([], [], "x", color=f"C{i}", label=f"{attention}: {len(size['seeds']) - len(done)} diverged")
        ax.set_title(f"σ_qk = {sigma:g}", fontsize=9)
        ax.set_xlabel("step (dτ ∝ 1/tr K_all(0))")
        ax.set_ylabel("risk R")
    x = np.arange(len(rows))
    axes[-1].bar(x, [r["all_min"] / r["all_trace"] for r in rows], 0.6)
    axes[-1].set_xticks(x)
    axes[-1].set_xticklabels([f"{r['attention']}\nσ {r['sigma_qk']:g}" for r in rows], fontsize=7)
    axes[-1].set_yscale("log")
    axes[-1].set_ylabel("λ_min(K_all) / tr(K_all) at τ = 0")
    for ax in axes:
        ax.grid(alpha=0.3)
    for ax in axes[:-1]:
        ax.legend(fontsize=7)
    common.save_figure(fig, "variants", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

"""The figure of induction.py (docs/figures/exp_induction.png). Apart from the driver so that its design, runs
and criteria fit one file."""
import numpy as np

import common
from induction import BAYES, REACHED, SCORE


def figure(found, rows, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    (curves, taus), (stage, scores) = axes
    for i, (c, seeds) in enumerate(found.items()):
        runs = list(seeds.values())
        if not runs or any(len(v["history"]["tau"]) != len(runs[0]["history"]["tau"]) for v in runs):
            continue
        tau = np.asarray(runs[0]["history"]["tau"])
        gap = np.mean([np.asarray(v["history"]["baseline_gap"]) for v in runs], axis=0)
        curves.plot(tau, gap, color=f"C{i}", ls="-" if c[1] == 2 else "--", label=f"M {c[0]}, L {c[1]}")
    for level, ls in ((REACHED, ":"), (BAYES, "-.")):
        curves.axhline(level, color="k", lw=0.8, ls=ls, label=f"gap {level:g}")
    curves.set_yscale("log")
    curves.set_xlabel("tau (Adam: step x dtau)")
    curves.set_ylabel("held-out CE - bigram baseline (nats), mean over seeds")
    curves.set_title("the gap to the Bayes bigram predictor", fontsize=9)

    widths = size["widths"]
    x = np.asarray(widths, float) ** -0.5
    for j, seed in enumerate(size["seeds"]):
        y = [found[(M, 2)].get(seed, {}).get("tau_star", np.nan) for M in widths]
        taus.plot(x, y, "o-", color=f"C{j}", lw=0.8, label=f"seed {seed}")
    taus.set_xlabel("M^-1/2 (L = 2)")
    taus.set_ylabel(f"tau* (first gap <= {REACHED:g})")
    taus.set_title("criterion 4: does tau* converge as M grows (left)?", fontsize=9)

    ref = found[(size["reference"], 2)]
    for j, (seed, v) in enumerate(sorted(ref.items())):
        if len(v.get("stage", [])):
            stage.plot(v["stage"][:, 0], v["stage"][:, 1], color=f"C{j}", label=f"KL(unigram||model) s{seed}")
            stage.plot(v["stage"][:, 0], v["stage"][:, 2], color=f"C{j}", ls="--")
            stage.axhline(v["path"][0], color=f"C{j}", lw=0.6, ls=":")
    stage.plot([], [], "k--", label="KL(bigram||model)")
    stage.plot([], [], "k:", label="least KL(unigram||path)")
    stage.set_yscale("log")
    stage.set_xlabel("tau")
    stage.set_ylabel("nats")
    stage.set_title(f"criterion 2: a unigram stage (L 2, M {size['reference']})", fontsize=9)

    for j, (seed, v) in enumerate(sorted(ref.items())):
        h = v["history"]
        scores.plot(h["tau"], np.asarray(h["previous_token_score"])[:, 0], color=f"C{j}", lw=0.8)
        scores.plot(h["tau"], np.asarray(h["induction_score"])[:, -1], color=f"C{j}", lw=0.8, ls="--")
        if "previous" in v:
            scores.plot([h["tau"][-1]], [v["previous"][0]], "o", color=f"C{j}")
            scores.plot([h["tau"][-1]], [v["induction"][-1]], "s", color=f"C{j}")
    scores.axhline(SCORE, color="k", lw=0.8)
    scores.plot([], [], "k-", label="probe: previous-token, slice 1")
    scores.plot([], [], "k--", label="probe: exact-copy induction, slice 2")
    scores.plot([], [], "ko", label="end, held-out: previous-token, slice 1")
    scores.plot([], [], "ks", label="end, held-out: statistical induction, slice 2")
    scores.set_xlabel("tau")
    scores.set_ylabel("attention mass")
    scores.set_title(f"criterion 3: the scores (L 2, M {size['reference']})", fontsize=9)
    common.finish_axes(axes.ravel())
    common.save_figure(fig, "induction", options)

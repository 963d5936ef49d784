"""The figure of width_depth.py (docs/figures/exp_width_depth.png): the training curves of both sweeps, the endings, the fitted
risks against size, the steps' stability and the test accuracies. Apart from the driver so that its design,
runs and criteria fit one file."""
import numpy as np

import common
import stats
from width_depth import JUMP, interval, log_interval, schedule, smallest


def plot(per, size, base, chosen, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.4))
    level = f"{100 * stats.LEVEL:g} % t over each size's seeds"
    sweeps = (("width", "M", [(M, size["fixed_L"]) for M in size["widths"]], size["widths"], f"L = {size['fixed_L']}"),
              ("depth", "L", [(size["fixed_M"], L) for L in size["depths"]], size["depths"], f"M = {size['fixed_M']}"))
    for ax, (sweep, var, models, x, fixed) in zip(axes[0][:2], sweeps):
        for j, (m, value) in enumerate(zip(models, x)):
            curves = [v["curve"] for v in per[m].values()]
            if curves and all(len(c[0]) == len(curves[0][0]) for c in curves):
                ax.plot(curves[0][0], np.exp(np.mean([np.log(c[1]) for c in curves], axis=0)), color=f"C{j}",
                        label=f"{var} = {value} (dtau {per[m][next(iter(per[m]))]['dtau']:g})")
        ax.axvline(size["compare_tau"], color="k", ls="--", lw=0.8, label=f"tau = {size['compare_tau']:g} "
                   "(criteria 5, 6)")
        ax.set_yscale("log")
        ax.set_xlabel("training time tau")
        ax.set_ylabel(f"{sweep} ({fixed}): training cross-entropy (geometric mean)")
    names = [f"M{M} L{L}" for M, L in per]
    ax = axes[0][2]
    for k, got in enumerate(per.values()):
        ax.plot([k] * len(got), [v["share"] for v in got.values()], "o", color="C0", alpha=0.6,
                label="a seed at its end" if k == 0 else None)
    ax.axhline(common.SEPARATED_FRACTION, color="k", ls="--", lw=0.8, label="separated above")
    ax.set_ylabel("share of training images with a logit margin >= log 9")
    ax.set_title("criteria 1-4 (endings)", fontsize=9)
    ax = axes[1][0]
    for i, (sweep, var, models, x, fixed) in enumerate(sweeps):
        for j, (m, value) in enumerate(zip(models, x)):
            common.interval_bar(ax, value * 1.05 ** (i - 0.5), log_interval(per[m]), exp=True, marker="os"[i], color=f"C{i}",
                label=f"{sweep}: {var} ({fixed})" if j == 0 else None)
        every = [s for s in size["seeds" if i == 0 else "depth_seeds"] if all(s in per[m] for m in models)]
        if len(every) >= 2 and len(x) >= 2:
            fit = stats.per_seed_slopes(x, [[per[m][s]["risk"] for m in models] for s in every])
            b = fit.estimates.mean(axis=0)
            ax.plot(x, np.exp(b[0]) * np.asarray(x, float) ** b[1], color=f"C{i}", ls="--", lw=0.8,
                    label=f"{sweep}: slope {fit['slope'].text(2)}")
    common.interval_bar(ax, size["widths"][0] * 0.9, log_interval(per[smallest(size)], "end_risk"), exp=True, marker="v",
        color="C3", label=f"smallest at its end, tau = {schedule(size, *smallest(size))[2]:g} (criterion 1)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("size (M or L)")
    ax.set_ylabel(f"training cross-entropy at tau = {size['compare_tau']:g} (fitted)")
    ax.set_title(f"criteria 5, 6; geometric mean, {level}", fontsize=9)
    ax = axes[1][1]
    for k, got in enumerate(per.values()):
        ax.plot([k] * len(got), [v["jump"] for v in got.values()], "o", color="C0", alpha=0.6,
                label="largest R / R of the row before, a run" if k == 0 else None)
        for key, marker, label in (("stable", "x", "cross-entropy's"), ("squared", "+", "squared loss's")):
            ax.plot([k] * len(got), [v["dtau"] / v[key] for v in got.values()], marker,
                    color=f"C{1 + (key != 'stable')}",
                    label=f"dtau / the {label} linearised stable step (first seed)" if k == 0 else None)
    ax.axhline(JUMP, color="k", lw=0.8, label=f"a catapult: x{JUMP:g}")
    ax.axhline(1, color="k", ls=":", lw=0.8)
    ax.set_yscale("log")
    ax.set_title("the steps' stability", fontsize=9)
    ax = axes[1][2]
    for k, m in enumerate(per):
        star = m == chosen
        common.interval_bar(ax, k, interval([v["test_acc"] for v in per[m].values()]), marker="*" if star else "o",
            ms=12 if star else 6, color="C3" if star else "C0",
            label="test, chosen on validation" if star else ("test" if k == 0 else None))
        if per[m]:
            ax.plot(k + 0.2, np.mean([v["validation"] for v in per[m].values()]), "x", color="0.4",
                    label="validation (mean)" if k == 0 else None)
    ax.axhline(base["test"]["logistic"], color="k", ls="-.", lw=0.8, label="logistic regression (test)")
    ax.axhline(base["test"]["centroid"], color="k", ls=":", lw=0.8, label="nearest centroid (test)")
    ax.set_ylabel("accuracy (share of images)")
    ax.set_title(f"criteria 7-8 (test images); {level}", fontsize=9)
    for ax in (axes[0][2], axes[1][1], axes[1][2]):
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=30, fontsize=7)
    common.finish_axes([a for r in axes for a in r], legend_size=6)
    common.save_figure(fig, "width_depth", options)

"""The figure of methods.py (docs/figures/exp_methods.png). Apart from the driver so that its design, runs
and criteria fit one file."""
import numpy as np

import common
import stats
from methods import ALIKE, BAND, TASKS, fmt, langevin, power


def plot(per, listed, rows, size, predicted, factor, pixel, dtau_l, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.4))
    level = f"{100 * stats.LEVEL:g} % t over {len(size['seeds'])} seeds"
    row = {(r["task"], r["method"]): r for r in rows}
    geometric = lambda curves: np.exp(np.nanmean([np.log(c) for c in curves], axis=0))
    for ax, task in zip(axes[0][:2], TASKS):
        for j, (label, keys) in enumerate(listed[task]):
            curves = [v["curve"] for v in per[task, label].values()]
            if not curves or any(len(c[0]) != len(curves[0][0]) for c in curves):
                ax.plot([], [], color=f"C{j}", label=f"{label}: diverged or missing")
                continue
            shift = size["icl"]["tau"] if keys is None else 0.0  # from the flow's end
            ax.plot(curves[0][0] + shift, geometric([c[1] for c in curves]), color=f"C{j}",
                    label=f"{label} (dtau {row[task, label]['dtau']:g}): {row[task, label]['ending']}")
        start = geometric([v["start"] for v in per[task, "flow"].values()]) if per[task, "flow"] else np.nan
        ax.axhline(common.INTERPOLATED * start, color="k", ls="--", lw=0.8, label="interpolated: 1e-10 R(0)")
        if task == "icl":
            for value in predicted.values():
                ax.axhline(value, color="0.5", ls=":", lw=0.8)
            ax.plot([], [], color="0.5", ls=":", lw=0.8, label="T N d_out/(2ML)")
        ax.set_yscale("log")
        ax.set_xlabel("training time tau (Adam: its own tau = dtau steps)")
        ax.set_ylabel(f"{task}: training risk R (geometric mean over seeds)")
    ax = axes[0][2]
    for j, (label, keys) in enumerate(listed["icl"]):
        for i, v in enumerate(per["icl", label].values()):
            tau, bound = v["bound"]
            keep = np.isfinite(bound)
            if keep.any():
                shift = size["icl"]["tau"] if keys is None else 0.0
                ax.plot(tau[keep] + shift, bound[keep], color=f"C{j}", lw=0.8, marker=".",
                        label=f"{label} (dtau {v['dtau']:g}; min bound/dtau {row['icl', label]['euler_margin']:.3g})"
                        if i == 0 else None)
    for dtau in sorted({keys["train.dtau"] for _, keys in listed["icl"] if keys and "ntk.every" in keys}):
        ax.axhline(dtau, color="k", lw=0.8, ls="-" if dtau == size["icl"]["dtau"] else "--", label=f"dtau {dtau:g}")
    ax.set_yscale("log")
    ax.set_xlabel("training time tau (Langevin from the flow's end)")
    ax.set_ylabel("icl: stable Euler step 2N / lambda_max(K_all), each seed")
    ax = axes[1][0]
    for i, T in enumerate(size["temperatures"]):
        common.interval_bar(ax, T, row["icl", langevin(T)]["intervals"]["equipartition"], marker="o",
            color=f"C{len(listed['digits']) + i}", label=f"T = {T:g}")
    if factor:
        ax.plot(size["temperatures"], [np.mean(list(factor.values()))] * 2, "k--", lw=0.8,
                label="quadratic model (step and window)")
    ax.axhline(1, color="0.4", lw=0.8, label="equipartition")
    ax.axhspan(1 / BAND, BAND, color="0.6", alpha=0.3, label=f"x/ {BAND:g}")
    ax.set_xscale("log")
    ax.set_xlabel("temperature T")
    ax.set_ylabel(f"icl: R* / (T N d_out/(2ML)), dtau_L = {dtau_l:g}")
    ax.set_title(f"{level}; power of R* in T {fmt(power(per, size))}", fontsize=8)
    titles = {"icl": "icl: the flow's held-out ratio minus the method's (zero predictor: ratio 1)",
              "digits": f"digits: accuracy minus the flow's (logistic {pixel['logistic']:.3f}, centroid "
                        f"{pixel['centroid']:.3f})"}
    for ax, task in zip(axes[1][1:], TASKS):
        for j, (label, _) in enumerate(listed[task]):
            r = row[task, label]
            style = dict(marker="*" if r["chosen"] else "o", ms=12 if r["chosen"] else 6, color=f"C{j}",
                         label=f"{label}{' (chosen on validation)' if r['chosen'] else ''}")
            if label == "flow":
                ax.plot(0, 0, ls="none", **style)
            common.interval_bar(ax, j, r["intervals"]["to_flow"], **style)
        ax.axhline(0, color="k", lw=0.8)
        if task == "digits":
            ax.axhspan(-ALIKE, ALIKE, color="0.6", alpha=0.3, label=f"alike: +-{ALIKE:g}")
        ax.set_xticks(range(len(listed[task])))
        ax.set_xticklabels([label for label, _ in listed[task]], rotation=30, fontsize=7)
        ax.set_ylabel("better than the flow, paired by seed (judging half)")
        ax.set_title(f"{titles[task]}\n{level}", fontsize=8)
    common.finish_axes([a for r in axes for a in r], legend_size=6)
    common.save_figure(fig, "methods", options)

"""The figure of langevin.py (docs/figures/exp_langevin.png). Apart from the driver so that its design, runs and
criteria fit one file."""
import numpy as np

import common
import stats
from langevin import BATCHES, FAMILY, STEPS, model_ratio


def plot(rows, measured, minimum, size, dtau0, seeds, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    grid = np.linspace(0, max(STEPS) * dtau0, 50)
    temperatures, decay = size["temperatures"], size["decay"]

    def bars(ax, sel, shift, color, label):
        """Measured steps as circles, dtau -> 0 as a diamond, the mean of the
        per-seed lines through them; shifted sideways by `shift` to be seen."""
        sel = sorted(sel, key=lambda r: r["dtau"])
        d, v = np.array([r["dtau"] for r in sel]), np.array([r["value"] for r in sel])
        err = np.array([v - [r["low"] for r in sel], [r["high"] for r in sel] - v])
        for k, marker in ((slice(1, None), "o"), (slice(0, 1), "D")):
            ax.errorbar(d[k] + shift, v[k], yerr=err[:, k], marker=marker, ls="none", capsize=3, color=color,
                        label=label if marker == "o" else None)
        if np.all(np.isfinite(v)):
            # The line through the means is the mean of the per-seed lines.
            ax.plot(grid + shift, v[0] + np.polyfit(d[1:], v[1:], 1)[0] * grid, "-", lw=0.8, color=color)

    shift = 0.02 * dtau0
    for i, T in enumerate(temperatures):
        bars(axes[0], [r for r in rows if r["quantity"] == "ratio" and r["T"] == T],
             (i - (len(temperatures) - 1) / 2) * shift, f"C{i}", f"T = {T:g}")
    if seeds:
        curve = np.mean([[model_ratio(minimum[s]["kappa"], decay, minimum[s]["n"], d) for d in grid] for s in seeds],
                        axis=0)
        axes[0].plot(grid, curve, "k--", lw=0.8, label="Euler-Maruyama model, mean over modes of 1/(1 - dtau h/2)")
    axes[0].axhline(1, color="0.4", lw=0.8, label="equipartition over n")
    axes[0].set_xlabel("step dtau (diamonds: dtau -> 0)")
    axes[0].set_ylabel("(Q_bar - Q*) / (T n / (2 M L))")
    bars(axes[1], [r for r in rows if r["quantity"] == "power"], 0.0, "C0",
         f"power of Q_bar - Q* against T, T = {temperatures[0]:g}..{temperatures[-1]:g}")
    axes[1].axhline(1, color="0.4", lw=0.8, label="linear in T")
    axes[1].set_xlabel("step dtau (diamond: dtau -> 0)")
    axes[1].set_ylabel("power p")
    n = len(temperatures) * len(STEPS) * len(size["seeds"])
    q = stats.t_quantile(1 - FAMILY / n, 2 * (BATCHES - 1))
    for i, T in enumerate(temperatures):
        for j, x in enumerate(STEPS):
            values = [measured[T, x, s][2] for s in size["seeds"] if (T, x, s) in measured]
            axes[2].plot(np.full(len(values), i * (len(STEPS) + 1) + j), values, "o", ms=3, color=f"C{j}",
                         label=f"dtau = {x:g} dtau_0" if i == 0 else None)
    axes[2].axhline(q, color="k", ls=":", lw=0.8, label=f"Bonferroni bound {q:.2f}")
    axes[2].set_xticks([i * (len(STEPS) + 1) + 1 for i in range(len(temperatures))])
    axes[2].set_xticklabels([f"T = {T:g}" for T in temperatures])
    axes[2].set_ylabel("stationarity statistic of Q, every run (sanity a)")
    first = next(r for r in rows if r["quantity"] == "minimum")
    fig.suptitle(f"lambda = {decay:g}; error bars: 95 % Student-t over {len(seeds)} seeds ({len(seeds) - 1} dof); "
                 f"dtau_0 = {dtau0:g}; at theta*: Q* {first['objective']:.4g}, R* {first['risk']:.3g}, "
                 f"n/(M L) {first['model']:.4g}", fontsize=9)
    common.finish_axes(axes)
    common.save_figure(fig, "langevin", options)

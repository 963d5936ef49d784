#!/usr/bin/env python3
"""Mean-field, not lazy: how far each particle moves, |theta_lm(tau) -
theta_lm(0)| (Q, K, V of head (l, m) as one vector), against the width M at
the same tau. In the mean-field scaling (velocity (M L) dR/dtheta) each
particle moves O(1) whatever M: features are learned. In the NTK/lazy
scaling the displacement would shrink like 1/sqrt(M).

  python3 scripts/experiments/lazy.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

Writes lazy.csv (M, seeds, median, mean, 10 % and 90 % quantiles of the
displacement and of the relative displacement |dtheta| / |theta(0)|, the
final risk) and exp_lazy.png (the displacement distributions); prints the
fitted power of the median displacement against M (lazy: -0.5).
"""
import numpy as np

import common
import fits
from common import Run

FULL = dict(widths=[4, 8, 16, 32, 64, 128], seeds=[1, 2, 3], L=4, N=32, steps=100, dtau=0.05)
QUICK = dict(widths=[2, 4, 8], seeds=[1], L=2, N=8, steps=10, dtau=0.05)


def displacements(path):
    run = common.mft_io.open_run(str(path))
    first, last = run.particles(0), run.particles(-1)
    run.close()
    heads = [s for s in ("Q", "K", "V") if s in first]
    L, M = first["Q"].shape[:2]
    start = np.hstack([first[s].reshape(L * M, -1) for s in heads])
    end = np.hstack([last[s].reshape(L * M, -1) for s in heads])
    moved = np.linalg.norm(end - start, axis=1)
    return moved, moved / np.linalg.norm(start, axis=1)


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs = [Run(f"M{M}-s{seed}", {"data.task": "icl-linear", "data.sequences": size["N"], "init.sigma_v": 0.5, "model.heads": M,
                                  "model.slices": size["L"], "init.seed": seed, "train.steps": size["steps"],
                                  "train.dtau": size["dtau"], "output.snapshot_every": size["steps"]})
            for M in size["widths"] for seed in size["seeds"]]
    paths = common.execute("lazy", runs, options)

    rows, samples = [], {}
    for M in size["widths"]:
        moved, relative, risk = [], [], []
        for seed in size["seeds"]:
            if f"M{M}-s{seed}" not in paths:
                continue
            a, b = displacements(paths[f"M{M}-s{seed}"])
            moved.append(a)
            relative.append(b)
            risk.append(common.history(paths[f"M{M}-s{seed}"])[0]["risk"][-1])
        if not moved:
            continue
        moved, relative = np.concatenate(moved), np.concatenate(relative)
        samples[M] = moved
        rows.append({"M": M, "seeds": len(risk), "median": np.median(moved), "mean": moved.mean(),
                     "q10": np.quantile(moved, 0.1), "q90": np.quantile(moved, 0.9),
                     "relative_median": np.median(relative), "risk": float(np.mean(risk))})
    common.write_csv("lazy", options, ["M", "seeds", "median", "mean", "q10", "q90", "relative_median", "risk"], rows)
    fit = fits.power_law([r["M"] for r in rows], [r["median"] for r in rows])

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    axes[0].boxplot([samples[r["M"]] for r in rows], labels=[str(r["M"]) for r in rows], showfliers=False)
    axes[0].set_xlabel("heads per slice M")
    axes[0].set_ylabel(f"|θ(τ) − θ(0)| per head, τ = {size['steps'] * size['dtau']:g}")
    M = np.array([r["M"] for r in rows], float)
    axes[1].loglog(M, [r["median"] for r in rows], "o-", label=f"median: M^{fit.value:.2f}±{fit.error:.2f}")
    axes[1].loglog(M, rows[0]["median"] * (M / M[0]) ** -0.5, "k:", label="lazy: M^-1/2")
    axes[1].set_xlabel("heads per slice M")
    axes[1].set_ylabel("median |θ(τ) − θ(0)| per head")
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.grid(alpha=0.3)
    common.save_figure(fig, "lazy", options)
    for r in rows:
        print(f"M={r['M']:<4} median |dtheta| {r['median']:.4f} (10-90 %: {r['q10']:.4f}-{r['q90']:.4f}), "
              f"relative {r['relative_median']:.4f}, final R {r['risk']:.3e}")
    print(f"median displacement ~ M^{fit.value:.3f} +- {fit.error:.3f} (mean-field: 0; lazy: -0.5)")


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

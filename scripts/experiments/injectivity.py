#!/usr/bin/env python3
"""Injectivity of the NTK against the number of tokens, by family ([B]'s
theorem). [B]: the V-part of the kernel, K_V = (M L) J_V J_V^T, is positive
definite on the population token measures mu_1..mu_N exactly when their
log-sum-exp functions Lambda_i(z) = log E_{mu_i} e^{<z, x>} are linearly
independent modulo affine functions. Gaussian translates (one covariance,
shifted means) fail this (their Lambda differ by linear functions), so as the
empirical measures of n tokens approach the population ones, lambda_min(K_V)
must go to 0; cubes of different radii, Laplace laws of different variances
and two-component Gaussian mixtures of different separations pass it, so
lambda_min(K_V) must stay away from 0.

Setting: d = d_h = 2, N = 4 sequences, M = 64, L = 4, n in {16, 32, ..,
1024}, three seeds (particles init.seed = s, tokens data.seed = 100 + s);
`mft ntk --cgf` for K_V and the log-sum-exp margins (empirical and the
closed-form population one), `mft ntk --ntk.part all` for K_all.

Criteria, stated before the runs. The slope is that of log lambda_min(K_V)
against log n over the four largest n (128..1024: the end where the
empirical measures approach the population), a least-squares line through
every seed's point; its interval is slope +- 2 standard errors.
  1. translates: the interval lies below 0 (the kernel degenerates);
  2-4. cubes, laplace, mixtures: the interval contains 0 (it does not).

  python3 scripts/experiments/injectivity.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft ntk` runs). About 15 minutes on 2 cores. Writes
injectivity.csv (family, n, seed, lambda_min and lambda_max of K_V and
K_all, the empirical and population log-sum-exp margins) and
exp_injectivity.png.
"""
import numpy as np

import common
import fits
from common import Run

FAMILIES = {
    "translates": {"families.kind": "gaussian-cov", "families.values": "0:1", "families.variances": "1:1"},
    "cubes": {"families.kind": "cube", "families.values": "0.5:2"},
    "laplace": {"families.kind": "laplace", "families.values": "0.2:1"},
    "mixtures": {"families.kind": "mixture", "families.values": "0:2"},
}
DEPENDENT = "translates"
FULL = dict(seeds=[1, 2, 3], M=64, L=4, tokens=[16, 32, 64, 128, 256, 512, 1024])
QUICK = dict(seeds=[1], M=4, L=2, tokens=[8, 16, 32, 64])
WINDOW = 4  # the fit's window: the largest four n
COLUMNS = ["family", "n", "seed", "V_min", "V_max", "all_min", "all_max", "cgf_margin", "cgf_population"]


def ntk_runs(name, base, size, extra_args=None):
    """The K_V (with the log-sum-exp test) and K_all runs of one case at every n and seed."""
    runs = []
    for n in size["tokens"]:
        for seed in size["seeds"]:
            args = {"data.task": "families", **base, "model.d": 2, "model.head_dim": 2, "data.sequences": 4,
                    "data.tokens": n, "model.heads": size["M"], "model.slices": size["L"], "init.seed": seed,
                    "data.seed": 100 + seed, **(extra_args or {})}
            runs.append(Run(f"{name}-n{n}-s{seed}-ntkV", {**args, "ntk.part": "V"}, command="ntk", extra=["--cgf"]))
            runs.append(Run(f"{name}-n{n}-s{seed}-ntkall", {**args, "ntk.part": "all"}, command="ntk"))
    return runs


def read_rows(name, paths, size):
    import h5py
    rows = []
    for n in size["tokens"]:
        for seed in size["seeds"]:
            row = {"family": name, "n": n, "seed": seed}
            for part in ("V", "all"):
                with h5py.File(paths[f"{name}-n{n}-s{seed}-ntk{part}"], "r") as f:
                    a = f["ntk"].attrs
                    row[f"{part}_min"], row[f"{part}_max"] = float(a["lambda_min"]), float(a["lambda_max"])
                    if part == "V":
                        row["cgf_margin"] = float(a["cgf_margin"])
                        row["cgf_population"] = float(a.get("cgf_margin_population", np.nan))
            rows.append(row)
    return rows


def slope(rows, column, window):
    """The power-law fit of `column` against n over the largest `window` n
    (every seed's point), or None where a value is not positive."""
    ns = sorted({r["n"] for r in rows})[-window:]
    pts = [(r["n"], r[column]) for r in rows if r["n"] in ns]
    if any(v <= 0 for _, v in pts):
        return None
    return fits.power_law([p[0] for p in pts], [p[1] for p in pts])


def slope_text(fit):
    if fit is None:
        return "no fit: a lambda_min <= 0"
    return f"slope {fit.value:.3f} +- {fit.error:.3f}, interval [{fit.value - 2 * fit.error:.3f}, " \
           f"{fit.value + 2 * fit.error:.3f}]"


def plot(rows, cases, window, options, name):
    """Three panels against n: lambda_min(K_V) with the window's fit,
    lambda_min(K_all), and the empirical log-sum-exp margin; mean and
    standard error over seeds."""
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for case in cases:
        mine = [r for r in rows if r["family"] == case]
        ns = sorted({r["n"] for r in mine})
        for ax, column in zip(axes, ("V_min", "all_min", "cgf_margin")):
            stats = [common.mean_and_error([r[column] for r in mine if r["n"] == n]) for n in ns]
            line = ax.errorbar(ns, [s[0] for s in stats], yerr=[s[1] for s in stats], marker="o", ms=3, capsize=2,
                               label=case)
            if column == "V_min":
                fit = slope(mine, column, window)
                if fit is not None:
                    top = np.array(ns[-window:], float)
                    ax.plot(top, fit.prefactor * top ** fit.value, ":", color=line[0].get_color(),
                            label=f"n^{fit.value:.2f}±{fit.error:.2f}")
    for ax, title in zip(axes, ("λ_min(K_V)", "λ_min(K_all)", "log-sum-exp margin (empirical)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tokens per sequence n")
        ax.set_ylabel(title)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    axes[1].legend(fontsize=6, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    common.save_figure(fig, name, options)


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "injectivity")
    size = QUICK if options.quick else FULL
    runs = [run for name, base in FAMILIES.items() for run in ntk_runs(name, base, size)]
    paths = common.execute("injectivity", runs, options)
    rows = [row for name in FAMILIES for row in read_rows(name, paths, size)]
    common.write_csv("injectivity", options, COLUMNS, rows)
    plot(rows, FAMILIES, WINDOW, options, "injectivity")

    lines = []
    for name in FAMILIES:
        mine = [r for r in rows if r["family"] == name]
        fit, fit_all = slope(mine, "V_min", WINDOW), slope(mine, "all_min", WINDOW)
        full = slope(mine, "V_min", len(size["tokens"]))
        population = np.nanmean([r["cgf_population"] for r in mine])
        numbers = (f"lambda_min(K_V) {slope_text(fit)}; over every n {slope_text(full)}; K_all "
                   f"{slope_text(fit_all)}; population log-sum-exp margin {population:.2e}")
        if name == DEPENDENT:
            holds = fit is not None and fit.value + 2 * fit.error < 0
            text = f"{name}: lambda_min(K_V) falls with n (slope interval below 0)"
        else:
            holds = fit is not None and fit.value - 2 * fit.error <= 0 <= fit.value + 2 * fit.error
            text = f"{name}: lambda_min(K_V) flat in n (slope interval contains 0)"
        lines.append(common.criterion(text, holds, numbers))
    common.write_criteria("injectivity", options, lines)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

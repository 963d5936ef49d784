#!/usr/bin/env python3
"""Mean-field, not lazy, against a lazy control. In the mean-field scaling
every particle moves O(1) whatever M, so the kernel of the flow,
K_all = (M L) J J^T of every parameter, changes by O(1) during training:
features are learned. The lazy control (docs/MODEL.md, section 6: the
prediction yhat(theta0) + alpha (yhat(theta) - yhat(theta0)), the risk over
alpha^2) with alpha = sqrt(M), the NTK parameterisation, moves every
particle alpha times less, so the kernel's change should fall like M^-1/2.
The lazy runs are mft runs on the targets yhat(0) + (y - yhat(0))/alpha
(exactly the lazy model for the squared loss; its risk is alpha^2 times the
reported one), from the same particles and tokens as the mean-field runs.

Setting: icl, N = 32, L = 4, M in {8, 16, .., 256}, three seeds; K_all at
initialisation (`mft ntk --ntk.part all`); Euler steps of one dtau for all
runs, min(0.05, N / (4 max lambda_max(K_all(0)))) (inside the linearised
flow's stability limit; a larger step makes the top mode oscillate and
moves the kernel in any scaling) up to tau = 5, in both scalings; K_all at
the last snapshot (`mft ntk --from RUN --snapshot -1`); the relative change
|K(tau) - K(0)|_F / |K(0)|_F.

Criteria, stated before the runs: the power of the relative kernel change
against M (a least-squares line through every seed's point on log-log axes,
interval +- 2 standard errors)
  1. contains 0 in the mean-field scaling (flat in M);
  2. contains -1/2 in the lazy control.

  python3 scripts/experiments/lazy.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft forward` and `mft ntk` runs). About 15 minutes on 2
cores. Writes lazy.csv (scaling, M, alpha, seeds, the relative kernel
change with its standard error, the median particle displacement
|theta(tau) - theta(0)| (Q, K, V of a head as one vector) and its 10-90 %
range, the final risk of the model) and exp_lazy.png.
"""
from pathlib import Path

import numpy as np

import common
import fits
from common import Run

FULL = dict(widths=[8, 16, 32, 64, 128, 256], seeds=[1, 2, 3], L=4, N=32, tau=5.0, dtau=0.05)
QUICK = dict(widths=[2, 4, 8], seeds=[1, 2], L=2, N=8, tau=0.5, dtau=0.05)
SCALINGS = ("mean-field", "lazy")
COLUMNS = ["scaling", "M", "alpha", "seeds", "kernel_change", "kernel_change_err", "median", "q10", "q90", "risk"]


def displacements(path):
    """|theta(tau) - theta(0)| per head (Q, K, V as one vector), first to last snapshot."""
    run = common.mft_io.open_run(str(path))
    first, last = run.particles(0), run.particles(-1)
    run.close()
    heads = [s for s in ("Q", "K", "V") if s in first]
    L, M = first["Q"].shape[:2]
    start = np.hstack([first[s].reshape(L * M, -1) for s in heads])
    end = np.hstack([last[s].reshape(L * M, -1) for s in heads])
    return np.linalg.norm(end - start, axis=1)


def gram(path):
    import h5py
    with h5py.File(path, "r") as f:
        return f["ntk/gram"][()]


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "lazy", "`mft forward` and `mft ntk`")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("lazy" + ("-quick" if options.quick else ""))

    def model(M, seed):
        return {"model.heads": M, "model.slices": size["L"], "init.seed": seed, "init.sigma_v": 0.5}

    task = {"data.task": "icl-linear", "data.sequences": size["N"]}
    first = [Run(f"M{M}-s{seed}-forward", {**task, **model(M, seed)}, command="forward")
             for M in size["widths"] for seed in size["seeds"]]
    first += [Run(f"M{M}-s{seed}-ntk0", {**task, **model(M, seed), "ntk.part": "all"}, command="ntk")
              for M in size["widths"] for seed in size["seeds"]]
    paths = common.execute("lazy", first, options)
    import h5py
    top = 0.0
    for run in first[len(first) // 2:]:
        with h5py.File(paths[run.name], "r") as f:
            top = max(top, float(f["ntk"].attrs["lambda_max"]))
    dtau = float(f"{min(size['dtau'], size['N'] / (4 * top)):.2g}")
    steps = int(round(size["tau"] / dtau))
    print(f"[lazy] dtau = {dtau:g} (largest lambda_max(K_all(0)) {top:.4g}), {steps} steps")
    training = {"train.steps": steps, "train.dtau": dtau, "output.snapshot_every": steps}
    lazy = []
    for M in size["widths"]:
        for seed in size["seeds"]:
            lazy.append(Run(f"M{M}-s{seed}-mean-field", {**task, **model(M, seed), **training}))
            data = common.residual_scaled_data(paths[f"M{M}-s{seed}-forward"], folder, f"M{M}-s{seed}-targets",
                                               1 / np.sqrt(M))
            lazy.append(Run(f"M{M}-s{seed}-lazy", {"data.task": "file", "data.file": str(data), **model(M, seed),
                                                   **training}))
    paths.update(common.execute("lazy", lazy, options))
    kernels = []
    for M in size["widths"]:
        for seed in size["seeds"]:
            for scaling in SCALINGS:
                name = f"M{M}-s{seed}-{scaling}"
                if name not in paths:
                    continue
                kernels.append(Run(f"{name}-ntkend", {"from": paths[name], "snapshot": -1, "ntk.part": "all"},
                                   command="ntk"))
    paths.update(common.execute("lazy", kernels, options))

    rows, curves = [], {}
    for scaling in SCALINGS:
        for M in size["widths"]:
            alpha = 1.0 if scaling == "mean-field" else float(np.sqrt(M))
            change, moved, risk = [], [], []
            for seed in size["seeds"]:
                name = f"M{M}-s{seed}-{scaling}"
                if f"{name}-ntkend" not in paths:
                    continue
                K0 = gram(paths[f"M{M}-s{seed}-ntk0"])  # the same particles and tokens in both scalings
                change.append(np.linalg.norm(gram(paths[f"{name}-ntkend"]) - K0) / np.linalg.norm(K0))
                moved.append(displacements(paths[name]))
                h, _ = common.history(paths[name])
                risk.append(alpha ** 2 * float(h["risk"][-1]))
                if seed == size["seeds"][0]:
                    curves[(scaling, M)] = (h["tau"], alpha ** 2 * np.asarray(h["risk"], float))
            if not change:
                continue
            mean, err = common.mean_and_error(change)
            moved = np.concatenate(moved)
            rows.append({"scaling": scaling, "M": M, "alpha": alpha, "seeds": len(change), "kernel_change": mean,
                         "kernel_change_err": err, "median": np.median(moved), "q10": np.quantile(moved, 0.1),
                         "q90": np.quantile(moved, 0.9), "risk": float(np.mean(risk)), "points": change})
    common.write_csv("lazy", options, COLUMNS, rows)

    fitted = {}
    for scaling in SCALINGS:
        pts = [(r["M"], c) for r in rows if r["scaling"] == scaling for c in r["points"]]
        fitted[scaling] = fits.power_law([p[0] for p in pts], [p[1] for p in pts]) if len(pts) > 2 else None
    plot(rows, curves, fitted, size, options)
    lines = []
    for scaling, target in (("mean-field", 0.0), ("lazy", -0.5)):
        fit = fitted[scaling]
        holds = fit is not None and fit.value - 2 * fit.error <= target <= fit.value + 2 * fit.error
        changes = ", ".join(f"{r['kernel_change']:.3g} (M = {r['M']})" for r in rows if r["scaling"] == scaling)
        numbers = (f"power {fit.value:.3f} +- {fit.error:.3f}, interval [{fit.value - 2 * fit.error:.3f}, "
                   f"{fit.value + 2 * fit.error:.3f}]; change {changes}" if fit else "no fit")
        lines.append(common.criterion(f"{scaling}: the relative kernel change goes like M^{target:g} "
                                      f"(interval contains {target:g})", holds, numbers))
    common.write_criteria("lazy", options, lines)
    # Where the change leaves a power law: the fit without the narrowest
    # width, and the local power between the two widest.
    for scaling in SCALINGS:
        mine = [r for r in rows if r["scaling"] == scaling]
        pts = [(r["M"], c) for r in mine[1:] for c in r["points"]]
        text = []
        if len({p[0] for p in pts}) > 2:
            fit = fits.power_law([p[0] for p in pts], [p[1] for p in pts])
            text.append(f"power over M >= {mine[1]['M']} {fit.value:.3f} +- {fit.error:.3f}")
        if len(mine) > 1:
            a_, b_ = mine[-2], mine[-1]
            local = np.log(b_["kernel_change"] / a_["kernel_change"]) / np.log(b_["M"] / a_["M"])
            text.append(f"local power between M = {a_['M']} and {b_['M']} {local:.3f}")
        print(f"measured: {scaling}: " + "; ".join(text))


def plot(rows, curves, fitted, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for i, scaling in enumerate(SCALINGS):
        mine = [r for r in rows if r["scaling"] == scaling]
        M = np.array([r["M"] for r in mine], float)
        fit = fitted[scaling]
        label = f"{scaling}: M^{fit.value:.2f}±{fit.error:.2f}" if fit else scaling
        axes[0].errorbar(M, [r["kernel_change"] for r in mine], yerr=[r["kernel_change_err"] for r in mine],
                         marker="o", ms=3, capsize=2, color=f"C{i}", label=label)
        axes[1].errorbar(M, [r["median"] for r in mine],
                         yerr=[[r["median"] - r["q10"] for r in mine], [r["q90"] - r["median"] for r in mine]],
                         marker="o", ms=3, capsize=2, color=f"C{i}", label=f"{scaling} (median, 10-90 %)")
        if scaling == "lazy" and len(M):
            axes[0].plot(M, mine[0]["kernel_change"] * (M / M[0]) ** -0.5, "k:", lw=0.8, label="M^-1/2")
    top = max(size["widths"])
    for i, scaling in enumerate(SCALINGS):
        if (scaling, top) in curves:
            tau, risk = curves[(scaling, top)]
            axes[2].semilogy(tau, risk, color=f"C{i}", label=f"{scaling}, M = {top}")
    for ax, ylabel in zip(axes, ("|K(τ) − K(0)|_F / |K(0)|_F", "|θ(τ) − θ(0)| per head", "risk R of the model")):
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[:2]:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("heads per slice M")
    axes[2].set_xlabel("τ")
    common.save_figure(fig, "lazy", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

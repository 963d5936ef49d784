"""The figures of clustering.py (docs/figures/exp_clustering.png and the trajectories). Apart from the driver so
that its design, runs and criteria fit one file."""
import numpy as np

import common
from mft import tokens
from clustering import EPS, TOLERANCE, deviation, run_name


def plot(results, laws, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(3, 2, figsize=(11, 11))
    short, long_, life = size["short"], size["long"], size["lifetime"]
    n_shown = short["ns"][min(1, len(short["ns"]) - 1)]
    for col, d in enumerate(short["dims"][:2]):
        ax = axes[0][col]
        for c, beta in enumerate(short["betas"]):
            r = results[("short", d, n_shown, beta)]
            ax.plot(r["t"], r["counts"].mean(axis=0), color=f"C{c}", label=f"β = {beta:g}")
        ax.set_yscale("log")
        ax.set_xlabel("t = T s")
        ax.set_ylabel(f"clusters (|x_i − x_j| < {EPS:g}), mean of {short['sequences']}")
        ax.set_title(f"d = {d}, n = {n_shown}, T = {short['T']:g}")
    for col, d in enumerate(long_["dims"][:2]):
        ax = axes[1][col]
        n = long_["ns"][0]
        for c, beta in enumerate(long_["betas"]):
            r = results[("long", d, n, beta)]
            for i in range(min(2, r["energy"].shape[0])):
                ax.semilogx(r["t"][1:], r["energy"][i, 1:], color=f"C{c}", lw=1, ls="-" if i == 0 else ":",
                            label=f"β = {beta:g}" if i == 0 else None)
        for k in (1, 2, 3, 4):
            ax.axhline(1 / k, color="0.7", lw=0.6, ls="--")
        ax.set_xlabel("t = T s")
        ax.set_ylabel("E_β / E_max (dashed: 1/k, k equal clusters)")
        ax.set_title(f"metastability: d = {d}, n = {n}, T = {long_['T']:g}, two sequences")
    for row, dims in ((0, short["dims"]), (1, long_["dims"])):
        for col in range(len(dims), 2):
            axes[row][col].axis("off")

    ax = axes[2][0]
    for c, ((d, n), law) in enumerate(laws.items()):
        if not law:
            continue
        betas, Y = law["betas"], law["Y"]
        censored = np.array([results[("lifetime", d, n, b)]["censored"] for b in betas]).T[law["kept"]]
        for i in range(Y.shape[0]):
            ax.plot(betas, np.exp(Y[i]), color=f"C{c}", lw=0.4, alpha=0.2)
        ax.plot(np.broadcast_to(betas, Y.shape)[censored], np.exp(Y[censored]), "^", color=f"C{c}", ms=5)
        ax.plot(betas, np.exp(Y.mean(axis=0)), "o", color=f"C{c}", ms=6,
                label=f"d = {d}: geometric mean of {Y.shape[0]} sequences")
        grid = np.linspace(betas[0], betas[-1], 60)
        for law_name, ls, x in (("exponential", "-", grid), ("power", "--", np.log(grid))):
            a, slope = (law["fits"][law_name][k].value for k in ("a", "slope"))
            ax.plot(grid, np.exp(a + slope * x), color=f"C{c}", lw=2, ls=ls,
                    label=f"d = {d}: {law_name} law fitted on β ≤ {life['train_up_to']:g}")
    # Shade the held-out betas alone: from halfway past the last fitted one.
    gap = min(b for b in life["betas"] if b > life["train_up_to"]) - life["train_up_to"]
    ax.axvspan(life["train_up_to"] + gap / 2, life["betas"][-1] + gap / 2, color="0.9", label="held out")
    ax.set_yscale("log")
    ax.set_xlabel("β")
    ax.set_ylabel("two-cluster lifetime τ = t_1 − t_2 (▲ censored: T − t_2)")
    ax.set_title("lifetimes of the two-cluster state, per sequence (thin)")

    ax = axes[2][1]
    checks = [c for key, r in results.items() if key[3] >= 4 for c in r["checks"]]
    if checks:
        angle = [c["closest"] for c in checks]
        ax.semilogy(angle, [max(deviation(c, "point"), 1e-16) for c in checks], "o", ms=3,
                    label="point clusters, every pair of clusters")
        ax.semilogy(angle, [max(deviation(c, "share"), 1e-16) for c in checks], "x", ms=4,
                    label="within clusters only, Σ_c (n_c/n)²")
    ax.axhline(TOLERANCE, color="k", lw=0.8, ls="--", label=f"tolerance {TOLERANCE:g}")
    ax.set_xlabel("angle between the closest two clusters (degrees)")
    ax.set_ylabel("|E_β / E_formula − 1| on the plateau")
    ax.set_title("energy on the plateaus at β ≥ 4")
    common.finish_axes([axes[row][col] for row, dims in ((0, short["dims"]), (1, long_["dims"]))
                        for col in range(min(2, len(dims)))] + list(axes[2]))
    common.save_figure(fig, "clustering", options)


def plot_trajectories(paths, size, options):
    """The tokens of one sequence from t = 0 to T of the long runs at the
    largest beta, on the circle (d = 2) and the sphere (d = 3), coloured by
    the cluster each ends in."""
    import h5py
    plt = common.pyplot()
    long_ = size["long"]
    beta, n = long_["betas"][-1], long_["ns"][0]
    fig = plt.figure(figsize=(5.5 * len(long_["dims"][:2]), 5))
    for col, d in enumerate(long_["dims"][:2]):
        with h5py.File(paths[run_name("long", d, n, beta)], "r") as f:
            X, s = f["forward/tokens_depth"][0], f["forward/depth"][()]
        labels = tokens.cluster_labels(X[-1], EPS)
        colour = [f"C{c % 10}" for c in labels]
        if d == 3:
            ax = fig.add_subplot(1, 2, col + 1, projection="3d")
            for j in range(n):
                ax.plot(X[:, j, 0], X[:, j, 1], X[:, j, 2], lw=0.6, color=colour[j])
            ax.scatter(X[0, :, 0], X[0, :, 1], X[0, :, 2], s=6, c="0.5")
            ax.scatter(X[-1, :, 0], X[-1, :, 1], X[-1, :, 2], s=30, c="k", marker="x")
        else:
            ax = fig.add_subplot(1, 2, col + 1)
            t = np.linspace(0, 2 * np.pi, 200)
            ax.plot(np.cos(t), np.sin(t), color="0.85", lw=0.8)
            for j in range(n):
                # the angle against depth, unwrapped, drawn on a radius that grows with log t
                r = 0.4 + 0.6 * np.log1p(long_["T"] * s) / np.log1p(long_["T"])
                phi = np.unwrap(np.arctan2(X[:, j, 1], X[:, j, 0]))
                ax.plot(r * np.cos(phi), r * np.sin(phi), lw=0.6, color=colour[j])
            ax.scatter(0.4 * X[0, :, 0], 0.4 * X[0, :, 1], s=6, c="0.5", label="t = 0 (radius 0.4)")
            ax.scatter(X[-1, :, 0], X[-1, :, 1], s=30, c="k", marker="x", label=f"t = {long_['T']:g} (radius 1)")
            ax.set_aspect("equal")
            ax.legend(fontsize=7, loc="lower right")
        ax.set_title(f"d = {d}, n = {n}, β = {beta:g}: one sequence's tokens, coloured by final cluster"
                     + ("\n(radius: log(1 + t))" if d == 2 else ""), fontsize=9)
    common.save_figure(fig, "clustering_tokens", options)

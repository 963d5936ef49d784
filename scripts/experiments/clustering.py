#!/usr/bin/env python3
"""Clustering and metastability of the tokens with given weights: the
self-attention dynamics of Geshkovski, Letrouit, Polyanskiy and Rigollet (The
emergence of clusters in self-attention dynamics, 2023; A mathematical
perspective on Transformers, 2023; Geshkovski, Koubbi, Polyanskiy, Rigollet
on metastability, 2024) as mft's forward problem: one head per slice with
Q = K = sqrt(beta) I and V = T I, tokens on the sphere (model.norm sphere),
so that the depth s in [0, 1] is that literature's time t = T s in [0, T]:

    dx_i/dt = Pi(x_i) sum_j softmax_j(beta <x_i, x_j>) x_j.

Tokens uniform on the sphere of R^d (d = 2, 3), N = 8 sequences, RK4 with
fixed steps dt = T / (L k) of about 0.08; clusters are the connected
components of |x_i - x_j| < 1e-2 (mft.tokens); E_beta = (1/(2 beta n^2))
sum_ij exp(beta <x_i, x_j>), whose largest value E_max = e^beta / (2 beta)
is one cluster's.

(a) T = 40, n = 32..256, beta in {1, 4, 9, 16}: the cluster count against
depth, and at the end. (b) T = 400, n = 32: the staircase of metastable
states, as plateaus of the cluster count k (2 <= k <= n/2, held while t at
least doubles), and on each plateau the energy of k separated clusters,
E_beta / E_max = sum_c (n_c / n)^2 (the share of pairs within clusters: the
pairs across clusters add e^(beta cos theta) << e^beta).

Criteria, stated before the runs:
  1. beta = 1 (the theorem's regime, reached within T): every sequence ends
     in one cluster at t = 40, for d = 2, 3 and every n;
  2. the final cluster count grows with beta: its mean at beta = 16 is above
     its mean at beta = 1 for every (d, n) (metastability: merging times
     grow exponentially with beta);
  3. the integrator keeps the sphere: the largest | |x| - 1 | along depth is
     below 1e-6 in every run;
  4. metastability: at beta >= 4 every sequence of the long runs holds a
     plateau;
  5. on every plateau at beta >= 4, E_beta / E_max equals sum_c (n_c/n)^2
     within 5 %.

  python3 scripts/experiments/clustering.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft forward` runs). About ten minutes on 2 cores.
Writes clustering.csv (one row per horizon, d, n and beta: the final cluster
counts, the share of sequences in one cluster, E/E_max at the end, the
plateaus per sequence and the energy-share fit on them, the drift),
exp_clustering.png (cluster counts and energies against t) and
exp_clustering_tokens.png (one sequence's token paths on the circle and the
sphere).
"""
from pathlib import Path

import numpy as np

import common
from common import Run

from mft import tokens

EPS = 1e-2
FULL = dict(short=dict(T=40.0, L=8, k=64, dims=[2, 3], ns=[32, 64, 128, 256]),
            long=dict(T=400.0, L=16, k=313, dims=[2, 3], ns=[32]),
            betas=[1.0, 4.0, 9.0, 16.0], sequences=8)
QUICK = dict(short=dict(T=10.0, L=2, k=8, dims=[2], ns=[8, 16]),
             long=dict(T=40.0, L=4, k=16, dims=[2], ns=[8]),
             betas=[1.0, 9.0], sequences=2)
COLUMNS = ["horizon", "d", "n", "beta", "T", "sequences", "clusters_mean", "clusters_min", "clusters_max",
           "one_cluster", "energy_ratio", "plateaus", "share_fit", "drift"]


def runs_of(size, folder):
    runs = []
    for horizon in ("short", "long"):
        h = size[horizon]
        for d in h["dims"]:
            for n in h["ns"]:
                x = np.random.default_rng(100 * d + n).standard_normal((size["sequences"], n, d))
                data = common.data_file(folder, f"sphere-d{d}-n{n}", x, np.zeros((size["sequences"], 1)))
                for beta in size["betas"]:
                    eye = np.broadcast_to(np.eye(d), (h["L"], 1, d, d))
                    weights = common.particle_file(folder, f"given-d{d}-b{beta:g}-T{h['T']:g}",
                                                   {"Q": np.sqrt(beta) * eye, "K": np.sqrt(beta) * eye,
                                                    "V": h["T"] * eye})
                    runs.append(Run(f"{horizon}-d{d}-n{n}-b{beta:g}", {
                        "model.norm": "sphere", "init.file": str(weights), "data.task": "file",
                        "data.file": str(data), "model.heads": 1, "model.slices": h["L"], "model.head_dim": d,
                        "depth.steps_per_slice": h["k"], "forward.tokens_depth": "true",
                        "forward.every_step": "true"}, command="forward"))
    return runs


def plateaus(t, counts, n):
    """The plateaus of one sequence's cluster count: [(first, last)] index
    ranges of a constant count k, 2 <= k <= n/2, with t[last] >= 2 t[first]."""
    out, start = [], 1
    for j in range(2, len(t) + 1):
        if j == len(t) or counts[j] != counts[start]:
            k = counts[start]
            if 2 <= k <= n // 2 and t[start] > 0 and t[j - 1] >= 2 * t[start]:
                out.append((start, j - 1))
            start = j
    return out


def analyse(path, beta, T):
    import h5py
    with h5py.File(path, "r") as f:
        X, s = f["forward/tokens_depth"][()], f["forward/depth"][()]
        drift = float(f["forward"].attrs["norm_drift"])
    N, rows, n = X.shape[0], X.shape[1], X.shape[2]
    t = T * s
    e_max = np.exp(beta) / (2 * beta)
    counts = np.array([[tokens.cluster_count(X[i, j], EPS) for j in range(rows)] for i in range(N)])
    energy = np.array([[tokens.interaction_energy(X[i, j], beta) for j in range(rows)] for i in range(N)]) / e_max
    found, fits, closest = [], [], []
    for i in range(N):
        mine = plateaus(t, counts[i], n)
        found.append(len(mine))
        for first, last in mine:
            mid = (first + last) // 2
            labels = tokens.cluster_labels(X[i, mid], EPS)
            sizes = np.bincount(labels)
            share = float(np.sum((sizes / n) ** 2))
            fits.append(abs(energy[i, mid] / share - 1))
            # The closest two clusters: pairs across them weigh e^(beta (cos - 1)).
            centres = np.array([X[i, mid][labels == c].mean(axis=0) for c in range(len(sizes))])
            centres /= np.linalg.norm(centres, axis=1, keepdims=True)
            cos = (centres @ centres.T)[np.triu_indices(len(sizes), 1)]
            closest.append(float(np.degrees(np.arccos(np.clip(cos.max(), -1, 1)))))
    return {"t": t, "counts": counts, "energy": energy, "plateaus": found, "fits": fits, "closest": closest,
            "drift": drift}


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "clustering", "`mft forward`")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("clustering" + ("-quick" if options.quick else ""))
    runs = runs_of(size, folder)
    paths = common.execute("clustering", runs, options)

    rows, results = [], {}
    for horizon in ("short", "long"):
        h = size[horizon]
        for d in h["dims"]:
            for n in h["ns"]:
                for beta in size["betas"]:
                    name = f"{horizon}-d{d}-n{n}-b{beta:g}"
                    r = analyse(paths[name], beta, h["T"])
                    results[(horizon, d, n, beta)] = r
                    end = r["counts"][:, -1]
                    rows.append({"horizon": horizon, "d": d, "n": n, "beta": beta, "T": h["T"],
                                 "sequences": len(end), "clusters_mean": end.mean(), "clusters_min": int(end.min()),
                                 "clusters_max": int(end.max()), "one_cluster": float(np.mean(end == 1)),
                                 "energy_ratio": float(r["energy"][:, -1].mean()),
                                 "plateaus": float(np.mean(r["plateaus"])),
                                 "share_fit": max(r["fits"]) if r["fits"] else np.nan, "drift": r["drift"]})
    common.write_csv("clustering", options, COLUMNS, rows)
    plot(results, size, options)
    plot_trajectories(paths, size, options)

    short = [r for r in rows if r["horizon"] == "short"]
    long_ = [r for r in rows if r["horizon"] == "long"]
    b0, b1 = size["betas"][0], size["betas"][-1]
    ones = [r for r in short if r["beta"] == b0]
    grows = []
    for d in size["short"]["dims"]:
        for n in size["short"]["ns"]:
            low = next(r for r in short if (r["d"], r["n"], r["beta"]) == (d, n, b0))
            high = next(r for r in short if (r["d"], r["n"], r["beta"]) == (d, n, b1))
            grows.append((d, n, low["clusters_mean"], high["clusters_mean"]))
    meta = [r for r in long_ if r["beta"] >= 4]
    held = {(r["d"], r["beta"]): np.mean(np.array(results[("long", r["d"], r["n"], r["beta"])]["plateaus"]) > 0)
            for r in meta}
    fits = [f for r in meta for f in results[("long", r["d"], r["n"], r["beta"])]["fits"]]
    lines = [
        common.criterion(f"beta = {b0:g}: every sequence ends in one cluster at t = {size['short']['T']:g}",
                         all(r["one_cluster"] == 1.0 for r in ones),
                         "; ".join(f"d {r['d']} n {r['n']}: {r['one_cluster']:.0%} in one cluster" for r in ones)),
        common.criterion(f"the final cluster count grows with beta (mean at beta = {b1:g} above beta = {b0:g})",
                         all(hi > lo for _, _, lo, hi in grows),
                         "; ".join(f"d {d} n {n}: {lo:.3g} -> {hi:.3g}" for d, n, lo, hi in grows)),
        common.criterion("the integrator keeps the sphere: largest | |x| - 1 | below 1e-6",
                         all(r["drift"] < 1e-6 for r in rows), f"largest {max(r['drift'] for r in rows):.2e}"),
        common.criterion("metastability: at beta >= 4 every sequence of the long runs holds a plateau",
                         bool(held) and all(v == 1.0 for v in held.values()),
                         "; ".join(f"d {d} beta {b:g}: {v:.0%}" for (d, b), v in sorted(held.items()))),
        common.criterion("on every plateau at beta >= 4, E / E_max = sum_c (n_c/n)^2 within 5 %",
                         bool(fits) and max(fits) < 0.05,
                         f"{len(fits)} plateaus, largest deviation {max(fits) if fits else float('nan'):.2e}"),
    ]
    off = [(r["d"], r["beta"], f, a) for r in meta
           for f, a in zip(*(results[("long", r["d"], r["n"], r["beta"])][k] for k in ("fits", "closest"))) if f >= 0.05]
    if fits:
        print(f"measured: E / E_max against sum_c (n_c/n)^2 on the plateaus: median deviation {np.median(fits):.1e}; "
              f"{len(off)} of {len(fits)} beyond 5 %: " + "; ".join(
                  f"d {d} beta {b:g}: {f:.3f} with two clusters {a:.0f} degrees apart" for d, b, f, a in off))
    print("measured: plateaus per sequence (T = %g): " % size["long"]["T"]
          + "; ".join(f"d {r['d']} beta {r['beta']:g}: {r['plateaus']:.3g}" for r in long_))
    common.write_criteria("clustering", options, lines)


def plot(results, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    short, long_ = size["short"], size["long"]
    n_shown = short["ns"][min(1, len(short["ns"]) - 1)]
    for col, d in enumerate(short["dims"][:2]):
        ax = axes[0][col]
        for c, beta in enumerate(size["betas"]):
            r = results[("short", d, n_shown, beta)]
            ax.plot(r["t"], r["counts"].mean(axis=0), color=f"C{c}", label=f"β = {beta:g}")
        ax.set_yscale("log")
        ax.set_xlabel("t = T s")
        ax.set_ylabel(f"clusters (|x_i − x_j| < {EPS:g}), mean of {size['sequences']}")
        ax.set_title(f"d = {d}, n = {n_shown}, T = {short['T']:g}")
    for col, d in enumerate(long_["dims"][:2]):
        ax = axes[1][col]
        n = long_["ns"][0]
        for c, beta in enumerate(size["betas"]):
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
    common.finish_axes([axes[row][col] for row, dims in ((0, short["dims"]), (1, long_["dims"]))
                        for col in range(min(2, len(dims)))])
    common.save_figure(fig, "clustering", options)


def plot_trajectories(paths, size, options):
    """The tokens of one sequence from t = 0 to T of the long runs at the
    largest beta, on the circle (d = 2) and the sphere (d = 3), coloured by
    the cluster each ends in."""
    import h5py
    plt = common.pyplot()
    long_ = size["long"]
    beta, n = size["betas"][-1], long_["ns"][0]
    fig = plt.figure(figsize=(5.5 * len(long_["dims"][:2]), 5))
    for col, d in enumerate(long_["dims"][:2]):
        with h5py.File(paths[f"long-d{d}-n{n}-b{beta:g}"], "r") as f:
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


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

#!/usr/bin/env python3
"""Clustering and metastability of the tokens with given weights: the
self-attention dynamics of Geshkovski, Letrouit, Polyanskiy and Rigollet (The
emergence of clusters in self-attention dynamics, 2023; A mathematical
perspective on Transformers, 2023; Geshkovski, Koubbi, Polyanskiy, Rigollet
on metastability, 2024) as mft's forward problem: one head per slice with
Q = K = sqrt(beta) I and V = T I, tokens on the sphere (model.norm sphere),
so that the depth s in [0, 1] is that literature's time t = T s in [0, T]:

    dx_i/dt = Pi(x_i) sum_j softmax_j(beta <x_i, x_j>) x_j.

Tokens drawn i.i.d. N(0, I) in R^d (d = 2, 3) and put on the sphere by the
norm; RK4 with fixed steps dt = T / (L k) of 0.08 to 0.1; clusters are the
connected components of |x_i - x_j| < 1e-2; E_beta = (1/(2 beta n^2))
sum_ij exp(beta <x_i, x_j>), whose largest value E_max = e^beta / (2 beta)
is one cluster's.

(a) T = 40, n = 32..256, beta in {1, 4, 9, 16}, 8 sequences: the cluster
count against t, and at the end. (b) T = 400, n = 32, the same 8
sequences: the staircase, as plateaus of the cluster count k (2 <= k <= n/2,
held while t at least doubles). On each plateau of (a), (b) and (c) at
beta >= 4, the energy at the plateau's middle against that of point clusters
at the measured centres m_c (the unit mean direction of cluster c's n_c
tokens), every pair of clusters included:

    E_beta / E_max = sum_{c, c'} (n_c n_c' / n^2) exp(beta (<m_c, m_c'> - 1)).

A cluster of radius r (the largest |x_i - m_c|) moves each pair's exponent
by at most beta (2 r + r^2), and to first order these moves cancel over the
cluster (m_c is its mean direction); what remains is at most about
2 beta (1 + beta) r^2 of the energy. The tolerance 1e-3 is that bound at
r = 1.4e-3 for beta = 16 (a seventh of the clusters' eps): the formula
holds to it only on plateaus whose clusters have contracted to points.

(c) The lifetimes of the metastable two-cluster state, against beta. Two
point clusters at angle theta pull on each other with the weight
e^(-beta (1 - cos theta)) of a pair within a cluster, so the metastability
results predict lifetimes that grow like exp(c beta). n = 32,
24 sequences per d drawn apart from those of (a) and (b), T = 2500 with the
tokens written every unit of t (L = 2500 slices of k = 10 steps), beta in
{2, 2.5, 3, 3.5} for d = 2 and {2.5, 3, 3.5, 4} for d = 3 (chosen on pilot
runs of other sequences: from where every sequence holds two clusters to
where the longest lifetimes approach T). A sequence's lifetime is
tau = t_1 - t_2, t_2 the first time it has at most two clusters and t_1 the
first time it has one. A state that has not merged by T is censored: its
tau enters as the lower bound T - t_2; a tau below the output interval
(the count fell from 3 or more to 1 between two outputs) enters as that
interval. Where they fall at the ends of the grid (censoring at the
largest beta, the floor at the smallest) both can only flatten a
sequence's slope; the criterion line says how many were censored, and a
measured line how many were floored. The initial tokens of a
sequence are the same at every beta (a nested design): log tau = a + b beta
is fitted sequence by sequence and b's interval is over the sequences.

Criteria, stated before the runs (95 % Student-t intervals):
  1. beta = 1 (the theorem's regime, reached within T): every sequence ends
     in one cluster at t = 40, for d = 2, 3 and every n;
  2. the final cluster count grows with beta in the metastable range: at
     t = 40 the count at beta = 16 minus the count at beta = 4, paired by
     sequence (the same tokens), has an interval above 0 for every (d, n);
  3. the integrator keeps the sphere: the largest | |x| - 1 | along depth is
     below 1e-6 in every run;
  4. on every plateau at beta >= 4, E_beta / E_max equals the point-cluster
     energy above within 1e-3 relative;
  5. metastability, lifetimes exponential in beta: for d = 2 and d = 3 the
     per-sequence slope b of log tau = a + b beta has an interval above 0,
     and at most a quarter of the lifetimes at any beta are censored.
What was seen before these were stated: the earlier design's runs (a) and
(b), whose plateaus deviated from sum_c (n_c/n)^2 by up to 0.45; the full
energy of criterion 4 checked on four of those runs (at most 3.7e-7); the
lifetime betas and T chosen on a numpy pilot of other sequences (slope about
2 per unit of beta) and one run of (c) (d = 3, beta = 4: none censored).
A slope b > 0 over a beta range of 1.5 shows growth; it cannot tell
exp(c beta) from a steep power of beta.

  python3 scripts/experiments/clustering.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft forward` runs): 48 forward solves, about ten
minutes on 2 cores. Writes clustering.csv (one row per horizon, d, n and
beta: final cluster counts, the share of sequences in one cluster, E/E_max
at the end, plateaus per sequence, on them the largest deviation from the
point-cluster energy and from its within-cluster part sum_c (n_c/n)^2 and
the largest cluster radius, the median two-cluster lifetime and how many
are censored, the drift), exp_clustering.png (counts, energies, lifetimes
and the energy check) and exp_clustering_tokens.png (one sequence's token
paths on the circle and the sphere).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
from pathlib import Path

import numpy as np

import common
import stats
from common import Run

from mft import tokens

EPS = 1e-2
TOLERANCE = 1e-3      # criterion 4: relative, see above
CENSORED_SHARE = 0.25  # criterion 5: more censored lifetimes than this at a beta leave it unmeasured
HORIZONS = ("short", "long", "lifetime")
# draw: the seed offset of a horizon's tokens (rng(draw + 100 d + n)); the
# lifetime sequences are drawn apart from those of (a) and (b) and from the
# pilot runs, on the stream of (a), that chose the lifetime betas and T. The
# lifetime runs write the tokens at the slice boundaries (every unit of t):
# every step would be 0.3 to 0.5 GB a run.
FULL = dict(short=dict(T=40.0, L=8, k=64, dims=[2, 3], ns=[32, 64, 128, 256], betas=[1.0, 4.0, 9.0, 16.0],
                       sequences=8, every_step=True, draw=0),
            long=dict(T=400.0, L=16, k=313, dims=[2, 3], ns=[32], betas=[1.0, 4.0, 9.0, 16.0], sequences=8,
                      every_step=True, draw=0),
            lifetime=dict(T=2500.0, L=2500, k=10, dims=[2, 3], ns=[32],
                          betas={2: [2.0, 2.5, 3.0, 3.5], 3: [2.5, 3.0, 3.5, 4.0]}, sequences=24,
                          every_step=False, draw=10000))
QUICK = dict(short=dict(T=10.0, L=2, k=8, dims=[2], ns=[8, 16], betas=[1.0, 4.0, 9.0], sequences=2,
                        every_step=True, draw=0),
             long=dict(T=40.0, L=4, k=16, dims=[2], ns=[8], betas=[1.0, 4.0, 9.0], sequences=2, every_step=True,
                       draw=0),
             lifetime=dict(T=100.0, L=100, k=10, dims=[2], ns=[8], betas={2: [2.0, 3.0]}, sequences=3,
                           every_step=False, draw=10000))
COLUMNS = ["horizon", "d", "n", "beta", "T", "sequences", "clusters_mean", "clusters_min", "clusters_max",
           "one_cluster", "energy_ratio", "plateaus", "point_fit", "share_fit", "radius", "lifetime", "censored",
           "drift"]


def betas_of(h, d):
    return h["betas"][d] if isinstance(h["betas"], dict) else h["betas"]


def cases(size):
    """(horizon, d, n, beta) of every run, in order."""
    return [(name, d, n, beta) for name in HORIZONS for d in size[name]["dims"] for n in size[name]["ns"]
            for beta in betas_of(size[name], d)]


def run_name(horizon, d, n, beta):
    return f"{horizon}-d{d}-n{n}-b{beta:g}"


def runs_of(size, folder):
    runs = []
    for horizon, d, n, beta in cases(size):
        h = size[horizon]
        x = np.random.default_rng(h["draw"] + 100 * d + n).standard_normal((h["sequences"], n, d))
        data = common.data_file(folder, f"sphere-d{d}-n{n}-N{h['sequences']}-draw{h['draw']}", x,
                                np.zeros((h["sequences"], 1)))
        eye = np.broadcast_to(np.eye(d), (h["L"], 1, d, d))
        weights = common.particle_file(folder, f"given-d{d}-b{beta:g}-T{h['T']:g}-L{h['L']}",
                                       {"Q": np.sqrt(beta) * eye, "K": np.sqrt(beta) * eye, "V": h["T"] * eye})
        runs.append(Run(run_name(horizon, d, n, beta), {
            "model.norm": "sphere", "init.file": str(weights), "data.task": "file", "data.file": str(data),
            "model.heads": 1, "model.slices": h["L"], "model.head_dim": d, "depth.steps_per_slice": h["k"],
            "forward.tokens_depth": "true", "forward.every_step": "true" if h["every_step"] else "false"},
            command="forward"))
    return runs


def counts_along(X, eps):
    """The cluster count (components of |x_i - x_j| < eps, as
    tokens.cluster_count) of every row of X (rows, n, d), by propagating the
    smallest token index through the graph, all rows at once."""
    rows, n = X.shape[0], X.shape[1]
    out = np.empty(rows, int)
    chunk = max(1, 2 ** 22 // (n * n))
    for a in range(0, rows, chunk):
        Y = X[a:a + chunk]
        sq = np.sum(Y * Y, axis=-1)
        near = sq[:, :, None] + sq[:, None, :] - 2 * np.einsum("rid,rjd->rij", Y, Y) < eps * eps
        labels = np.broadcast_to(np.arange(n), Y.shape[:2]).copy()
        while True:
            new = np.where(near, labels[:, None, :], n).min(axis=-1)
            if np.array_equal(new, labels):
                break
            labels = new
        out[a:a + chunk] = np.sum(labels == np.arange(n), axis=-1)
    return out


def energy_along(X, beta):
    """E_beta / E_max = (1/n^2) sum_ij exp(beta (<x_i, x_j> - 1)) of every
    row of X (rows, n, d)."""
    n = X.shape[1]
    chunk = max(1, 2 ** 22 // (n * n))
    return np.concatenate([np.exp(beta * (np.einsum("rid,rjd->rij", Y, Y) - 1)).mean(axis=(1, 2))
                           for Y in (X[a:a + chunk] for a in range(0, X.shape[0], chunk))])


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


def point_clusters(x, beta):
    """For one sequence's tokens x (n, d) on a plateau: E/E_max measured, the
    point-cluster energy at the measured centres, its within-cluster part
    sum_c (n_c/n)^2, the largest cluster radius and the smallest angle
    between two centres (degrees)."""
    n = len(x)
    labels = tokens.cluster_labels(x, EPS)
    sizes = np.bincount(labels)
    centres = np.array([x[labels == c].mean(axis=0) for c in range(len(sizes))])
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    gram = centres @ centres.T
    measured = float(np.exp(beta * (x @ x.T - 1)).sum()) / n ** 2
    point = float(sizes @ np.exp(beta * (gram - 1)) @ sizes) / n ** 2
    radius = float(np.max(np.linalg.norm(x - centres[labels], axis=1)))
    closest = float(np.degrees(np.arccos(np.clip(gram[np.triu_indices(len(sizes), 1)].max(), -1, 1))))
    # Tokens off the sphere by delta move every exponent by up to 2 beta delta.
    off = float(np.max(np.abs(np.linalg.norm(x, axis=1) - 1)))
    return {"measured": measured, "point": point, "share": float(np.sum((sizes / n) ** 2)), "radius": radius,
            "closest": closest, "beta": beta,
            "estimate": 2 * beta * (1 + beta) * radius ** 2 + 2 * beta * off}


def two_cluster_lifetime(t, counts, T):
    """(tau, censored, floored) of one sequence: tau = t_1 - t_2 (first time
    at most two clusters, first time one), the lower bound T - t_2 when it
    has not merged by T (censored), the output interval when it fell from
    three or more to one between two outputs (floored); nan when it never
    came down to two clusters."""
    two, one = np.flatnonzero(counts <= 2), np.flatnonzero(counts == 1)
    if not two.size:
        return np.nan, True, False
    t2 = t[two[0]]
    if not one.size:
        return T - t2, True, False
    step = t[1] - t[0]
    tau = t[one[0]] - t2
    return max(tau, step), False, tau < step


def analyse(path, beta, T):
    import h5py
    with h5py.File(path, "r") as f:
        X, s = f["forward/tokens_depth"][()], f["forward/depth"][()]
        drift = float(f["forward"].attrs["norm_drift"])
    N, n = X.shape[0], X.shape[2]
    t = T * s
    counts = np.array([counts_along(X[i], EPS) for i in range(N)])
    energy = np.array([energy_along(X[i], beta) for i in range(N)])
    found, checks, lives = [], [], []
    for i in range(N):
        mine = plateaus(t, counts[i], n)
        found.append(len(mine))
        checks += [point_clusters(X[i, (first + last) // 2], beta) for first, last in mine]
        lives.append(two_cluster_lifetime(t, counts[i], T))
    tau, censored, floored = (np.array(v) for v in zip(*lives))
    return {"t": t, "counts": counts, "energy": energy, "plateaus": found, "checks": checks, "tau": tau,
            "censored": censored, "floored": floored, "drift": drift}


def deviation(check, key):
    return abs(check["measured"] / check[key] - 1)


def median_lifetime(r):
    """The median lifetime with the censored ones beyond T (inf when half or
    more are)."""
    return float(np.median(np.where(r["censored"], np.inf, r["tau"])))


def lifetime_fit(results, size, d, n):
    """The per-sequence fit log tau = a + b beta over the lifetime runs of d:
    (betas, log tau of the sequences fitted, the fit, the sequences left out
    because they never came down to two clusters at some beta)."""
    betas = np.array(betas_of(size["lifetime"], d))
    tau = np.array([results[("lifetime", d, n, b)]["tau"] for b in betas]).T
    kept = np.all(np.isfinite(tau), axis=1)
    Y = np.log(tau[kept])
    fit = stats.per_seed_fits([np.ones_like(betas), betas], Y, ("a", "b")) if len(Y) >= 2 else None
    return betas, Y, fit, int(np.sum(~kept))


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "clustering", "`mft forward`")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("clustering" + ("-quick" if options.quick else ""))
    paths = common.execute("clustering", runs_of(size, folder), options)

    rows, results = [], {}
    for horizon, d, n, beta in cases(size):
        r = analyse(paths[run_name(horizon, d, n, beta)], beta, size[horizon]["T"])
        results[(horizon, d, n, beta)] = r
        end, checks = r["counts"][:, -1], r["checks"]
        rows.append({"horizon": horizon, "d": d, "n": n, "beta": beta, "T": size[horizon]["T"],
                     "sequences": len(end), "clusters_mean": end.mean(), "clusters_min": int(end.min()),
                     "clusters_max": int(end.max()), "one_cluster": float(np.mean(end == 1)),
                     "energy_ratio": float(r["energy"][:, -1].mean()), "plateaus": float(np.mean(r["plateaus"])),
                     "point_fit": max((deviation(c, "point") for c in checks), default=np.nan),
                     "share_fit": max((deviation(c, "share") for c in checks), default=np.nan),
                     "radius": max((c["radius"] for c in checks), default=np.nan),
                     "lifetime": median_lifetime(r), "censored": int(r["censored"].sum()), "drift": r["drift"]})
    common.write_csv("clustering", options, COLUMNS, rows)
    plot(results, size, options)
    plot_trajectories(paths, size, options)
    common.write_criteria("clustering", options, judge(results, rows, size))


def judge(results, rows, size):
    short, life = size["short"], size["lifetime"]
    low, high = short["betas"][1], short["betas"][-1]
    ones = [r for r in rows if r["horizon"] == "short" and r["beta"] == short["betas"][0]]
    grows = {(d, n): stats.paired(results[("short", d, n, high)]["counts"][:, -1],
                                  results[("short", d, n, low)]["counts"][:, -1])
             for d in short["dims"] for n in short["ns"]}
    checks = [c for key, r in results.items() if key[3] >= 4 for c in r["checks"]]
    point = [deviation(c, "point") for c in checks]
    worst = max(range(len(checks)), key=lambda j: point[j]) if checks else None
    fits, censored, left_out = {}, {}, {}
    for d in life["dims"]:
        n = life["ns"][0]
        _, _, fits[d], left_out[d] = lifetime_fit(results, size, d, n)
        censored[d] = [(b, int(results[("lifetime", d, n, b)]["censored"].sum())) for b in betas_of(life, d)]
    measured = all(c <= CENSORED_SHARE * life["sequences"] for v in censored.values() for _, c in v)
    lines = [
        common.criterion(f"beta = {short['betas'][0]:g}: every sequence ends in one cluster at t = {short['T']:g}",
                         all(r["one_cluster"] == 1.0 for r in ones),
                         "; ".join(f"d {r['d']} n {r['n']}: {r['one_cluster']:.0%} in one cluster" for r in ones)),
        common.criterion(f"the final cluster count grows with beta: count at beta = {high:g} minus at beta = {low:g}, "
                         "paired by sequence, interval above 0 for every (d, n)",
                         all(iv.above(0) for iv in grows.values()),
                         "; ".join(f"d {d} n {n}: {iv.text()}" for (d, n), iv in grows.items())),
        common.criterion("the integrator keeps the sphere: largest | |x| - 1 | below 1e-6",
                         all(r["drift"] < 1e-6 for r in rows), f"largest {max(r['drift'] for r in rows):.2e}"),
        common.criterion(f"on every plateau at beta >= 4, E / E_max equals the point-cluster energy "
                         f"sum_cc' (n_c n_c'/n^2) exp(beta (<m_c, m_c'> - 1)) within {TOLERANCE:g} relative",
                         bool(checks) and max(point) < TOLERANCE,
                         f"{len(checks)} plateaus, largest deviation {max(point) if checks else np.nan:.2e} "
                         + (f"(beta {checks[worst]['beta']:g}, cluster radius {checks[worst]['radius']:.1e}); "
                            f"largest radius {max(c['radius'] for c in checks):.1e}" if checks else "")),
        common.criterion("metastability: the two-cluster lifetime grows exponentially with beta, per-sequence slope "
                         f"b of log tau = a + b beta above 0 for every d, at most {CENSORED_SHARE:.0%} censored "
                         "at any beta", measured and all(fit and fit["b"].above(0) for fit in fits.values()),
                         "; ".join(f"d {d}: b {fit['b'].text() if fit else 'none (under two sequences)'}, "
                                   f"censored at T = {life['T']:g}: "
                                   + ", ".join(f"{c} of {life['sequences']} at beta {b:g}" for b, c in censored[d])
                                   + (f", {left_out[d]} never at two clusters (left out)" if left_out[d] else "")
                                   for d, fit in fits.items())),
    ]
    share = [deviation(c, "share") for c in checks]
    if checks:
        print(f"measured: on the {len(checks)} plateaus at beta >= 4, E / E_max against the point-cluster energy: "
              f"median deviation {np.median(point):.1e}; against its within-cluster part sum_c (n_c/n)^2 alone: "
              f"median {np.median(share):.1e}, largest {max(share):.2e}, {sum(v >= 0.05 for v in share)} beyond 5 %; "
              f"the estimate from the radii and the norms, 2 beta (1 + beta) r^2 + 2 beta | |x| - 1 |, at most "
              f"{max(c['estimate'] for c in checks):.1e}, below the deviation on "
              f"{sum(c['estimate'] < deviation(c, 'point') for c in checks)} plateaus")
    print("measured: plateaus per sequence (T = %g): " % size["long"]["T"] + "; ".join(
        f"d {r['d']} beta {r['beta']:g}: {r['plateaus']:.3g}" for r in rows if r["horizon"] == "long"))
    for d in life["dims"]:
        n = life["ns"][0]
        lives = [results[("lifetime", d, n, b)] for b in betas_of(life, d)]
        print(f"measured: d {d}, two-cluster lifetime, geometric mean over sequences (censored as their bound): "
              + ", ".join(f"beta {b:g}: {np.exp(np.nanmean(np.log(r['tau']))):.3g}" for b, r in
                          zip(betas_of(life, d), lives))
              + f"; {sum(int(r['floored'].sum()) for r in lives)} below the output interval"
              + (f"; a {fits[d]['a'].text()}" if fits[d] else ""))
    return lines


def plot(results, size, options):
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
    for c, d in enumerate(life["dims"]):
        n = life["ns"][0]
        betas, Y, fit, _ = lifetime_fit(results, size, d, n)
        tau = np.array([results[("lifetime", d, n, b)]["tau"] for b in betas]).T
        censored = np.array([results[("lifetime", d, n, b)]["censored"] for b in betas]).T
        censored = censored[np.all(np.isfinite(tau), axis=1)]
        for i in range(Y.shape[0]):
            ax.plot(betas, np.exp(Y[i]), color=f"C{c}", lw=0.5, alpha=0.4)
        ax.plot(np.broadcast_to(betas, Y.shape)[censored], np.exp(Y[censored]), "^", color=f"C{c}", ms=5)
        if fit:
            grid = np.linspace(betas[0], betas[-1], 20)
            ax.plot(grid, np.exp(fit["a"].value + fit["b"].value * grid), color=f"C{c}", lw=2.5,
                    label=f"d = {d}: τ ∝ exp({fit['b'].value:.2f} β), {Y.shape[0]} sequences")
    ax.axhline(life["T"], color="0.5", lw=0.8, ls="--", label=f"T = {life['T']:g} (▲ censored: T − t_2)")
    ax.set_yscale("log")
    ax.set_xlabel("β")
    ax.set_ylabel("two-cluster lifetime τ = t_1 − t_2")
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


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

"""The geometry of the tokens along depth, as the literature on clustering
in self-attention dynamics measures it (Geshkovski, Letrouit, Polyanskiy,
Rigollet): from a run of `mft forward --forward.tokens_depth true`, per
depth s and sequence,

- clusters: the connected components of the graph that joins tokens i, j
  with |x_i - x_j| < eps (eps is printed with every count);
- the smallest and the mean cosine <x_i, x_j> / (|x_i| |x_j|) over i != j;
- the interaction energy E_beta = (1 / (2 beta n^2)) sum_{i,j} exp(beta <x_i, x_j>),
  which the unnormalised dynamics increases and which is flat on the
  plateaus of a metastable state;
- the attention matrix of a head (its score map and mask, reference.py):
  its numerical rank and its leaders, the fewest tokens whose columns hold
  `share` of the attention every token gives.

  python3 scripts/plot_tokens.py RUN.h5 [--eps 1e-2] [--beta 4] [--sequence 0] [--coords 0,3 | --coords pca]

prints the profile against depth and writes RUN_tokens.png: the trajectories
of one sequence's tokens and the cluster count and energy against depth.
The trajectories are drawn in coordinates --coords I,J, or on the first two
principal axes of that sequence's tokens over every depth (--coords pca);
by default on the circle for d = 2, the sphere for d = 3 and the principal
axes for d > 3 (the output names the view). The cluster panel shows the
mean count over the sequences and the band from the fewest to the most, on
a linear axis unless the counts span a factor 10 (then a log axis).
"""
import argparse
import os
import sys

import numpy as np

from . import h5checks
from . import io as mft_io
from . import reference
from .usage import usage_text


def cluster_labels(X, eps):
    """Labels 0, 1, ... of the connected components of the graph on the
    rows of X (n, d) that joins i and j when |x_i - x_j| < eps."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    near = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=-1) < eps
    labels = np.full(n, -1)
    count = 0
    for start in range(n):
        if labels[start] >= 0:
            continue
        labels[start] = count
        stack = [start]
        while stack:
            i = stack.pop()
            for j in np.flatnonzero(near[i] & (labels < 0)):
                labels[j] = count
                stack.append(j)
        count += 1
    return labels


def cluster_count(X, eps):
    """The number of connected components of |x_i - x_j| < eps."""
    return int(cluster_labels(X, eps).max()) + 1 if len(X) else 0


def cosines(X):
    """(smallest, mean) of <x_i, x_j> / (|x_i| |x_j|) over the pairs i != j."""
    X = np.asarray(X, dtype=float)
    Y = X / np.linalg.norm(X, axis=-1, keepdims=True)
    C = Y @ Y.T
    off = ~np.eye(len(X), dtype=bool)
    return float(C[off].min()), float(C[off].mean())


def interaction_energy(X, beta):
    """E_beta(X) = (1 / (2 beta n^2)) sum_{i,j} exp(beta <x_i, x_j>)."""
    X = np.asarray(X, dtype=float)
    return float(np.exp(beta * (X @ X.T)).sum() / (2.0 * beta * len(X) ** 2))


def attention_weights(X, Q, K, attention):
    """P (n, n) of one head with matrices Q, K (d_h, d) on tokens X (n, d),
    by the score map and mask of `attention`: a run's configuration
    ({'model.attention': ..., 'model.causal': ..., ...}, as run.config gives
    it; the keys it lacks take their defaults) or reference.attention of one."""
    if not isinstance(attention, reference.Attention):
        attention = reference.attention(attention)
    X = np.asarray(X, dtype=float)
    scores = (X @ Q.T) @ (X @ K.T).T
    return attention.weights(scores)


def numerical_rank(P, rtol=1e-6):
    """The singular values of P above rtol times the largest."""
    s = np.linalg.svd(P, compute_uv=False)
    return int(np.count_nonzero(s > rtol * s[0])) if s.size and s[0] > 0 else 0


def leaders(P, share=0.9):
    """The fewest tokens (columns of P) that receive `share` of all the
    attention: the leaders the other tokens follow."""
    received = np.asarray(P, dtype=float).sum(axis=0)
    order = np.argsort(received)[::-1]
    needed = int(np.searchsorted(np.cumsum(received[order]), share * received.sum() - 1e-12)) + 1
    return np.sort(order[:needed])


def profile(tokens_depth, eps, beta=None):
    """Per depth (rows of tokens_depth (N, K+1, n, d)) and averaged over the
    N sequences: {'clusters', 'clusters_min', 'clusters_max', 'min_cos',
    'mean_cos'[, 'energy']}, each an array (K+1,)."""
    T = np.asarray(tokens_depth, dtype=float)
    N, rows = T.shape[0], T.shape[1]
    counts = np.array([[cluster_count(T[i, k], eps) for k in range(rows)] for i in range(N)])
    cos = np.array([[cosines(T[i, k]) for k in range(rows)] for i in range(N)])
    out = {"clusters": counts.mean(axis=0), "clusters_min": counts.min(axis=0), "clusters_max": counts.max(axis=0),
           "min_cos": cos[..., 0].mean(axis=0), "mean_cos": cos[..., 1].mean(axis=0)}
    if beta is not None:
        out["energy"] = np.array([[interaction_energy(T[i, k], beta) for k in range(rows)]
                                  for i in range(N)]).mean(axis=0)
    return out


def read_tokens_depth(run):
    """(tokens (N, K+1, n, d), depths (K+1,)) of an open run, or RunFileError
    for a file without them."""
    if "forward/tokens_depth" not in run.file:
        raise mft_io.RunFileError(f"{run.path}: no /forward/tokens_depth "
                                  "(run mft forward with --forward.tokens_depth true)")
    return run.file["forward/tokens_depth"][...], run.file["forward/depth"][...]


def parse_coords(text):
    """--coords: 'pca', or two distinct coordinate indices 'i,j' (0-based)."""
    if text.strip().lower() == "pca":
        return "pca"
    try:
        pair = tuple(int(x) for x in text.split(","))
    except ValueError:
        pair = ()
    if len(pair) != 2 or pair[0] == pair[1] or min(pair) < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give two different coordinates i,j (from 0) or pca")
    return pair


def projection(X, coords=None):
    """The 2-D view of one sequence's tokens X (K+1, n, d) along depth:
    (points (K+1, n, 2), (x label, y label), what in words). coords: a pair
    (i, j) of coordinates; 'pca', the first two principal axes of the
    tokens of every depth together (centred; the share of their variance
    each holds in its label); None, the default: coordinates 0 and 1, or
    'pca' when d > 3. ValueError for a coordinate the tokens do not have."""
    X = np.asarray(X, dtype=float)
    d = X.shape[-1]
    if coords is None:
        coords = "pca" if d > 3 or d < 2 else (0, 1)
    if coords == "pca":
        flat = X.reshape(-1, d)
        centred = flat - flat.mean(axis=0)
        _, sv, vt = np.linalg.svd(centred, full_matrices=False)
        axes = vt[:2].T if d >= 2 else np.hstack([vt[:1].T, np.zeros((d, 1))])
        share = sv ** 2 / max(float((sv ** 2).sum()), np.finfo(float).tiny)
        share = np.concatenate([share, [0.0, 0.0]])[:2]
        points = (centred @ axes).reshape(X.shape[:-1] + (2,))
        labels = tuple(f"principal axis {k + 1} ({100 * share[k]:.0f} % of the variance)" for k in range(2))
        return points, labels, "the first two principal axes of the drawn tokens over every depth"
    i, j = coords
    if max(i, j) >= d:
        raise ValueError(f"--coords {i},{j}: the tokens have d = {d} coordinates (0 to {d - 1})")
    return X[..., [i, j]], (f"x[{i}]", f"x[{j}]"), f"coordinates x[{i}] and x[{j}]"


def cluster_scale(prof):
    """'log' when the cluster counts span a factor 10 or more (n tokens
    merging to a few), else 'linear': a count that barely moves is a flat
    line on a log axis."""
    low = max(float(np.min(prof["clusters_min"])), 1.0)
    return "log" if float(np.max(prof["clusters_max"])) >= 10 * low else "linear"


def plot(path, T, s, prof, sequence, eps, beta, coords=None):
    """The figure: one sequence's token trajectories (`projection`; the
    sphere in 3-D for d = 3 and no coords) and the clusters (mean over the
    sequences, the band from the fewest to the most) and energy against
    depth. Returns the matplotlib Figure (the caller saves and closes it)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator
    d = T.shape[-1]
    fig = plt.figure(figsize=(11, 4.2))
    X = T[sequence]  # (K+1, n, d)
    if d == 3 and coords is None:
        ax = fig.add_subplot(1, 2, 1, projection="3d")
        for j in range(X.shape[1]):
            ax.plot(X[:, j, 0], X[:, j, 1], X[:, j, 2], lw=0.7)
        ax.scatter(X[-1, :, 0], X[-1, :, 1], X[-1, :, 2], s=8, c="k")
        ax.set_xlabel("x[0]")
        ax.set_ylabel("x[1]")
        ax.set_zlabel("x[2]")
    else:
        ax = fig.add_subplot(1, 2, 1)
        P, (xlabel, ylabel), _ = projection(X, coords)
        if d == 2 and coords in (None, (0, 1), (1, 0)):
            t = np.linspace(0, 2 * np.pi, 200)
            ax.plot(np.cos(t), np.sin(t), color="0.85", lw=0.8)
        for j in range(P.shape[1]):
            ax.plot(P[:, j, 0], P[:, j, 1], lw=0.7)
        ax.scatter(P[-1, :, 0], P[-1, :, 1], s=8, c="k", zorder=3, label="s = 1")
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
    ax.set_title(f"sequence {sequence}: tokens from s = 0 to 1")
    right = fig.add_subplot(1, 2, 2)
    right.fill_between(s, prof["clusters_min"], prof["clusters_max"], color="C0", alpha=0.2, lw=0,
                       label="fewest to most over the sequences")
    right.plot(s, prof["clusters"], "o-", ms=3, label="mean over the sequences")
    right.set_xlabel("depth s")
    scale = cluster_scale(prof)
    right.set_yscale(scale)
    if scale == "linear":
        right.set_ylim(0, float(np.max(prof["clusters_max"])) + 1)
        right.yaxis.set_major_locator(MaxNLocator(integer=True))
    right.set_ylabel(f"clusters of the n = {T.shape[2]} tokens" + (" (log scale)" if scale == "log" else ""))
    right.set_title(f"clusters: components of |x_i − x_j| < ε = {eps:g}", fontsize=9)
    if "energy" in prof:
        twin = right.twinx()
        twin.plot(s, prof["energy"], color="C1", lw=1, label=f"energy E_β, β = {beta:g}")
        twin.set_ylabel("E_β")
        twin.legend(loc="center right", fontsize=8)
    right.legend(loc="best", fontsize=8)
    fig.tight_layout()
    return fig


@mft_io.exit_on_run_file_error
def main(argv=None):
    parser = argparse.ArgumentParser(description=usage_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="an mft forward run file with /forward/tokens_depth")
    parser.add_argument("--eps", type=float, default=1e-2, help="the clusters' distance (default 1e-2)")
    parser.add_argument("--beta", type=float, help="the energy's beta (default: none, no energy)")
    parser.add_argument("--sequence", type=int, default=0, help="the sequence whose tokens are drawn")
    parser.add_argument("--coords", type=parse_coords, default=None, metavar="I,J|pca",
                        help="the view of the drawn tokens: coordinates I and J (from 0), or pca, their first two "
                             "principal axes (default: coordinates 0 and 1, the sphere in 3-D for d = 3, pca for "
                             "d > 3)")
    parser.add_argument("-o", "--output", help="the figure (default RUN_tokens.png)")
    args = parser.parse_args(argv)
    out = h5checks.figure_output(args.output, os.path.splitext(args.run)[0] + "_tokens.png", [args.run])
    run = mft_io.open_run(args.run)
    T, s = read_tokens_depth(run)
    if not 0 <= args.sequence < T.shape[0]:
        sys.exit(f"error: --sequence {args.sequence}: {args.run} has {T.shape[0]} sequences")
    if args.coords is None and T.shape[-1] == 3:
        view = "the sphere, coordinates x[0], x[1], x[2]"
    else:
        try:
            view = projection(T[args.sequence], args.coords)[2]
        except ValueError as e:
            sys.exit(f"error: {e}")
    prof = profile(T, args.eps, args.beta)
    print(f"{'depth s':>10} {'clusters':>10} {'min':>5} {'max':>5} {'min cos':>10} {'mean cos':>10}"
          + (f" {'energy':>14}" if args.beta is not None else ""))
    for k in range(len(s)):
        line = (f"{s[k]:10.4g} {prof['clusters'][k]:10.3g} {prof['clusters_min'][k]:5d} {prof['clusters_max'][k]:5d}"
                f" {prof['min_cos'][k]:10.4f} {prof['mean_cos'][k]:10.4f}")
        if args.beta is not None:
            line += f" {prof['energy'][k]:14.8g}"
        print(line)
    print(f"clusters: connected components of |x_i - x_j| < eps = {args.eps:g}")
    print(f"trajectories of sequence {args.sequence}: {view}")
    print(f"clusters axis: {cluster_scale(prof)} scale")
    fig = plot(args.run, T, s, prof, args.sequence, args.eps, args.beta, args.coords)
    h5checks.save_figure(fig, out, dpi=120)
    import matplotlib.pyplot as plt
    plt.close(fig)
    print(f"wrote {out}")
    return 0

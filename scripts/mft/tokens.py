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

  python3 scripts/plot_tokens.py RUN.h5 [--eps 1e-2] [--beta 4] [--sequence 0]

prints the profile against depth and writes RUN_tokens.png: the trajectories
of one sequence's tokens (on the circle for d = 2, the sphere for d = 3, the
first two coordinates otherwise) and the cluster count and energy against
depth.
"""
import argparse
import os
import sys

import numpy as np

from . import io as mft_io
from . import reference


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


def attention_weights(X, Q, K, attention="softmax", causal=False):
    """P (n, n) of one head with matrices Q, K (d_h, d) on tokens X (n, d)."""
    X = np.asarray(X, dtype=float)
    scores = (X @ Q.T) @ (X @ K.T).T
    return reference.score_weights(scores, attention, causal)


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


def plot(path, T, s, prof, sequence, eps, beta, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    d = T.shape[-1]
    fig = plt.figure(figsize=(11, 4.2))
    X = T[sequence]  # (K+1, n, d)
    if d == 3:
        ax = fig.add_subplot(1, 2, 1, projection="3d")
        for j in range(X.shape[1]):
            ax.plot(X[:, j, 0], X[:, j, 1], X[:, j, 2], lw=0.7)
        ax.scatter(X[-1, :, 0], X[-1, :, 1], X[-1, :, 2], s=8, c="k")
    else:
        ax = fig.add_subplot(1, 2, 1)
        if d == 2:
            t = np.linspace(0, 2 * np.pi, 200)
            ax.plot(np.cos(t), np.sin(t), color="0.85", lw=0.8)
        for j in range(X.shape[1]):
            ax.plot(X[:, j, 0], X[:, j, 1], lw=0.7)
        ax.scatter(X[-1, :, 0], X[-1, :, 1], s=8, c="k", zorder=3, label="s = 1")
        ax.set_aspect("equal")
        ax.set_xlabel("x[0]")
        ax.set_ylabel("x[1]")
    ax.set_title(f"sequence {sequence}: tokens from s = 0 to 1")
    right = fig.add_subplot(1, 2, 2)
    right.plot(s, prof["clusters"], "o-", ms=3, label=f"clusters (|x_i − x_j| < {eps:g}), mean over sequences")
    right.set_xlabel("depth s")
    right.set_ylabel("clusters")
    right.set_yscale("log")
    if "energy" in prof:
        twin = right.twinx()
        twin.plot(s, prof["energy"], color="C1", lw=1, label=f"energy E_β, β = {beta:g}")
        twin.set_ylabel("E_β")
        twin.legend(loc="center right", fontsize=8)
    right.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


@mft_io.exit_on_run_file_error
def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="an mft forward run file with /forward/tokens_depth")
    parser.add_argument("--eps", type=float, default=1e-2, help="the clusters' distance (default 1e-2)")
    parser.add_argument("--beta", type=float, help="the energy's beta (default: none, no energy)")
    parser.add_argument("--sequence", type=int, default=0, help="the sequence whose tokens are drawn")
    parser.add_argument("-o", "--output", help="the figure (default RUN_tokens.png)")
    args = parser.parse_args(argv)
    run = mft_io.open_run(args.run)
    T, s = read_tokens_depth(run)
    if not 0 <= args.sequence < T.shape[0]:
        sys.exit(f"error: --sequence {args.sequence}: {args.run} has {T.shape[0]} sequences")
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
    out = args.output or os.path.splitext(args.run)[0] + "_tokens.png"
    plot(args.run, T, s, prof, args.sequence, args.eps, args.beta, out)
    print(f"wrote {out}")
    return 0

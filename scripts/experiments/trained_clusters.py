#!/usr/bin/env python3
"""Do trained mean-field transformers cluster their tokens? The tokens
through depth of models trained by mft, against the same models at
initialisation (the same particles before training: init.file at snapshot
0 and at the last one, `mft forward --forward.tokens_depth true`):

- in-context linear regression (examples/icl.ini: d = 6, M = 16, L = 4,
  2000 Adam steps on minibatches of 32 of N = 256 sequences of n = 16),
  seeds 1 and 2, measured on the training sequences;
- the digits (examples/digits.ini: 4 patch tokens of d = 20, M = 8, L = 4,
  mean readout, cross-entropy, 300 Euler steps of dtau = 0.5).

Per depth (the slice boundaries) and sequence: the mean and the smallest
cosine of the token pairs, and the angular clusters (the connected
components of |x_i/|x_i| - x_j/|x_j|| < 0.05, mft.tokens). The tokens live in
R^d here, so it is their directions that may cluster, as on the sphere.

Criteria, stated before the runs:
  1. training aligns the in-context tokens: at s = 1 the trained model's
     mean pair cosine exceeds the initial model's by more than 2 standard
     errors (over the sequences), for every seed;
  2. the same for the digits;
  3. no trained model collapses a sequence's tokens to one direction: at
     s = 1 fewer than half of its sequences form one angular cluster (the
     readout reads the tokens apart).

  python3 scripts/experiments/trained_clusters.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft forward` runs). About ten minutes on 2 cores.
Writes trained_clusters.csv (one row per model, state and depth) and
exp_trained_clusters.png.
"""
import sys
from pathlib import Path

import numpy as np

import common
from common import Run

sys.path.insert(0, str(Path(__file__).resolve().parent))
from width_depth import digits_file  # noqa: E402

from mft import tokens

EPS = 0.05
ICL = {"model.d": 6, "model.head_dim": 6, "model.heads": 16, "model.slices": 4, "data.task": "icl-linear",
       "data.sequences": 256, "data.tokens": 16, "train.method": "adam", "train.batch": 32, "train.dtau": 0.01,
       "train.steps": 2000, "output.history_every": 20, "output.snapshot_every": 500}
DIGITS = {"model.heads": 8, "model.slices": 4, "model.head_dim": 8, "readout.kind": "mean", "readout.dim": 10,
          "loss.kind": "cross-entropy", "data.task": "file", "train.dtau": 0.5, "train.steps": 300,
          "output.history_every": 5, "output.snapshot_every": 100}
FULL = dict(icl=ICL, icl_seeds=[1, 2], digits=DIGITS, digits_size=(None, None))
QUICK = dict(icl={**ICL, "model.heads": 4, "model.slices": 2, "data.sequences": 16, "train.steps": 20,
                  "train.batch": 8, "output.history_every": 5, "output.snapshot_every": 10},
             icl_seeds=[1], digits={**DIGITS, "model.heads": 4, "model.slices": 2, "train.steps": 10,
                                    "output.snapshot_every": 5}, digits_size=(40, 20))
COLUMNS = ["model", "state", "s", "sequences", "mean_cos", "mean_cos_err", "min_cos", "clusters", "one_cluster"]


def models(size, options):
    """[(name, training keys)]."""
    out = [(f"icl-s{seed}", {**size["icl"], "init.seed": seed, "data.seed": seed + 10})
           for seed in size["icl_seeds"]]
    out.append(("digits", {**size["digits"], "data.file": str(digits_file(options, *size["digits_size"]))}))
    return out


def measures(path):
    """Per depth: mean (and its standard error over sequences) and smallest
    pair cosine, the angular clusters, the share of one-cluster sequences."""
    import h5py
    with h5py.File(path, "r") as f:
        X, s = f["forward/tokens_depth"][()], f["forward/depth"][()]
    rows = []
    for j in range(len(s)):
        cos = np.array([tokens.cosines(X[i, j]) for i in range(X.shape[0])])
        dirs = X[:, j] / np.linalg.norm(X[:, j], axis=-1, keepdims=True)
        counts = np.array([tokens.cluster_count(dirs[i], EPS) for i in range(X.shape[0])])
        mean, err = common.mean_and_error(cos[:, 1])
        rows.append({"s": float(s[j]), "sequences": X.shape[0], "mean_cos": mean, "mean_cos_err": err,
                     "min_cos": float(cos[:, 0].mean()), "clusters": float(counts.mean()),
                     "one_cluster": float(np.mean(counts == 1))})
    return rows


def paired_rise(initial, trained):
    """The rise of the mean pair cosine at s = 1, sequence by sequence (the
    same sequences through both models), and its standard error."""
    import h5py
    ends = []
    for path in (initial, trained):
        with h5py.File(path, "r") as f:
            X = f["forward/tokens_depth"][:, -1]
        ends.append(np.array([tokens.cosines(x)[1] for x in X]))
    return common.mean_and_error(ends[1] - ends[0])


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "trained_clusters", "`mft forward`")
    size = QUICK if options.quick else FULL
    trained = models(size, options)
    paths = common.execute("trained_clusters", [Run(name, keys) for name, keys in trained], options)
    forwards = []
    for name, keys in trained:
        if name not in paths:
            sys.exit(f"error: the training run {name} diverged")
        base = {k: v for k, v in keys.items() if not k.startswith(("train.", "output."))}
        for state, row in (("initial", 0), ("trained", -1)):
            forwards.append(Run(f"{name}-{state}", {**base, "init.file": str(paths[name]), "init.snapshot": row,
                                                     "forward.tokens_depth": "true"}, command="forward"))
    paths.update(common.execute("trained_clusters", forwards, options))

    rows, by_model = [], {}
    for name, _ in trained:
        for state in ("initial", "trained"):
            for r in measures(paths[f"{name}-{state}"]):
                rows.append({"model": name, "state": state, **r})
                by_model.setdefault((name, state), []).append(r)
    common.write_csv("trained_clusters", options, COLUMNS, rows)
    plot(by_model, trained, options)

    def rise(name):
        a, b = by_model[(name, "initial")][-1], by_model[(name, "trained")][-1]
        error = np.hypot(a["mean_cos_err"], b["mean_cos_err"])
        return b["mean_cos"] - a["mean_cos"], error, a["mean_cos"], b["mean_cos"]

    icl = [n for n, _ in trained if n.startswith("icl")]
    rises = {n: rise(n) for n, _ in trained}
    ends = {n: by_model[(n, "trained")][-1]["one_cluster"] for n, _ in trained}
    text = lambda n: f"{n}: {rises[n][2]:.4f} -> {rises[n][3]:.4f} (rise {rises[n][0]:+.4f} +- {rises[n][1]:.4f})"
    lines = [
        common.criterion("training aligns the in-context tokens (mean pair cosine at s = 1 up by > 2 standard errors)",
                         all(rises[n][0] > 2 * rises[n][1] for n in icl), "; ".join(text(n) for n in icl)),
        common.criterion("training aligns the digits' tokens (the same)",
                         rises["digits"][0] > 2 * rises["digits"][1], text("digits")),
        common.criterion("no trained model collapses its sequences to one direction (under half in one cluster)",
                         all(v < 0.5 for v in ends.values()),
                         "; ".join(f"{n}: {v:.0%} of sequences in one angular cluster at s = 1" for n, v in ends.items())),
    ]
    print("measured: the rise paired by sequence (the criteria compare the two means): " + "; ".join(
        "%s: %+.4f +- %.4f" % ((n,) + tuple(paired_rise(paths[f"{n}-initial"], paths[f"{n}-trained"])))
        for n, _ in trained))
    common.write_criteria("trained_clusters", options, lines)


def plot(by_model, trained, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for c, (name, _) in enumerate(trained):
        for state, style in (("initial", "--"), ("trained", "-")):
            rows = by_model[(name, state)]
            s = [r["s"] for r in rows]
            axes[0].errorbar(s, [r["mean_cos"] for r in rows], yerr=[r["mean_cos_err"] for r in rows], ls=style,
                             marker="o", ms=3, capsize=2, color=f"C{c}", label=f"{name} {state}")
            axes[1].plot(s, [r["clusters"] for r in rows], style, marker="o", ms=3, color=f"C{c}",
                         label=f"{name} {state}")
    axes[0].set_xlabel("depth s")
    axes[0].set_ylabel("mean cosine of the token pairs")
    axes[1].set_xlabel("depth s")
    axes[1].set_ylabel(f"angular clusters (|x̂_i − x̂_j| < {EPS:g}), mean")
    common.finish_axes(axes)
    common.save_figure(fig, "trained_clusters", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

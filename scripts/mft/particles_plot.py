"""Plots the head particles of an mft run per depth slice across its
snapshots: a 2-D projection of V and of K^T Q (the bilinear form of the
scores, <Q x, K x'> = x^T Q^T K x'), showing how the particle measure moves
in training. Each head is one line through its positions at the chosen
snapshots (an open circle where it starts, a dot where it ends), so small
motions show as short strokes rather than overlapping clouds.

For each slice the projection is the first two principal axes of the
particles of all plotted snapshots together (a fixed basis per slice, so the
motion between snapshots is what changes).

Snapshots are chosen by training step (--steps 0,50,200), or by row of the
file's complete snapshots (--snapshots 0,-1; negative counts back from the
last); by default every snapshot when there are at most 8, else 8 evenly
spaced from the first to the last.

  python3 scripts/plot_particles.py RUN.h5 [-o particles.png] [--steps S,S,...] [--snapshots I,I,...]
                                    [--slices 0,3,7]
"""
import argparse
import os

import numpy as np

from . import h5checks
from . import io as mft_io
from .usage import usage_text


DEFAULT_SNAPSHOTS = 8


def int_list(text):
    return [int(x) for x in text.split(",") if x.strip()]


def pca_2d(points):
    """Projection of the rows of `points` on their first two principal axes."""
    centred = points - points.mean(axis=0)
    if centred.shape[1] == 1:
        return np.hstack([centred, np.zeros_like(centred)])
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    basis = vt[:2].T
    if basis.shape[1] < 2:
        basis = np.hstack([basis, np.zeros((basis.shape[0], 1))])
    return centred @ basis


@mft_io.exit_on_run_file_error
def main(argv=None):
    parser = argparse.ArgumentParser(description=usage_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="an mft run file")
    parser.add_argument("-o", "--output", help="PNG to write (default: RUN_particles.png)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--steps", type=int_list, default=None,
                       help="training steps of the snapshots to plot, comma-separated")
    which.add_argument("--snapshots", type=int_list, default=None,
                       help="rows of the complete snapshots, comma-separated, negative counting back from the last")
    parser.add_argument("--slices", type=int_list, default=None,
                        help="depth slices to show (default: up to 4, evenly spaced)")
    args = parser.parse_args(argv)
    out = h5checks.figure_output(args.output, os.path.splitext(args.run)[0] + "_particles.png", [args.run])

    run = mft_io.open_run(args.run)
    run.require_species("Q", "K", "V")
    steps = run.snapshot_steps
    if args.steps is not None:
        rows = [run.snapshot_index(step) for step in args.steps]
    elif args.snapshots is not None:
        rows = [run.snapshot_row(r) for r in args.snapshots]
    else:
        count = run.snapshot_count
        if count == 0:
            raise mft_io.RunFileError(f"{args.run}: no complete particle snapshot")
        rows = sorted(set(np.linspace(0, count - 1, min(count, DEFAULT_SNAPSHOTS)).round().astype(int)))
    snaps = [run.particles(r) for r in rows]
    L = snaps[0]["Q"].shape[0]
    slices = args.slices if args.slices is not None else sorted(set(np.linspace(0, L - 1, min(L, 4)).round().astype(int)))
    for l in slices:
        if not 0 <= l < L:
            raise SystemExit(f"error: --slices: slice {l} is not in [0, {L})")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(slices), 2, figsize=(8, 3.2 * len(slices)), squeeze=False)
    colours = plt.cm.viridis(np.linspace(0, 1, len(rows)))
    for i, l in enumerate(slices):
        for j, (name, feature) in enumerate((
                ("V", lambda s: s["V"][l].reshape(s["V"].shape[1], -1)),
                ("KᵀQ", lambda s: np.einsum("mhi,mhj->mij", s["K"][l], s["Q"][l]).reshape(s["Q"].shape[1], -1)))):
            feats = [feature(s) for s in snaps]
            # (snapshot, head, 2): every snapshot in the basis of all of them
            proj = pca_2d(np.vstack(feats)).reshape(len(feats), len(feats[0]), 2)
            ax = axes[i, j]
            if len(rows) > 1:
                for head in range(proj.shape[1]):
                    ax.plot(proj[:, head, 0], proj[:, head, 1], color="0.55", linewidth=0.7, alpha=0.6, zorder=1)
            for k in range(len(rows)):
                first, last = k == 0, k == len(rows) - 1
                ax.scatter(proj[k, :, 0], proj[k, :, 1], s=34 if first else 12 if last else 5, zorder=2,
                           facecolors="none" if first and len(rows) > 1 else colours[k], edgecolors=colours[k],
                           label=f"step {steps[rows[k]]} (τ = {run.snapshot_taus[rows[k]]:.3g})"
                                 + (", start" if first and len(rows) > 1 else ", end" if last and len(rows) > 1 else ""))
            ax.set_title(f"slice l = {l} (s ∈ [{l}/{L}, {l + 1}/{L})): {name} of each head", fontsize=9)
            ax.set_xlabel("principal axis 1")
            ax.set_ylabel("principal axis 2")
            ax.grid(alpha=0.3)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=7, frameon=False)
    fig.suptitle(f"{os.path.basename(args.run)}: head particles θ_lm, M = {snaps[0]['Q'].shape[1]} per slice, "
                 "PCA projection per slice", fontsize=10)
    fig.tight_layout(rect=(0, 0.03 + 0.02 * ((len(rows) - 1) // 4), 1, 1))
    h5checks.save_figure(fig, out, dpi=110)
    print(f"run: {args.run}, snapshots {[int(steps[r]) for r in rows]}, slices {list(slices)}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

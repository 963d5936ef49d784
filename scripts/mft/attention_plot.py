"""The attention each slice applies, as `mft forward --output.attention
true` writes it for a task of symbols (MODEL.md §13): /forward/attention
(the first held-out sequences) and /forward/attention_probe (the induction
probe: R symbols repeated twice), each (S, L, n, n), row a the weights of
query token a over the tokens b, averaged over the slice's heads at the
tokens entering it.

  python3 scripts/plot_attention.py RUN.h5 [--sequence 0] [-o FIGURE]

prints each slice's previous-token score (the mass from t onto t - 1) and
induction score (on the probe, the mass from t in the second copy onto the
position after t's earlier copy), averaged over the sequences the file
holds, and writes RUN_attention.png: a row of maps per set (held-out, probe)
and a column per slice, for sequence --sequence of each, with the probe's
induction diagonal marked.
"""
import argparse
import os
import sys

import numpy as np

from . import h5checks
from . import io as mft_io
from .usage import usage_text

SETS = (("attention", "held-out sequence"), ("attention_probe", "induction probe"))


def scores(A):
    """(previous-token, induction) per slice of maps A (S, L, n, n): the mean
    over sequences of the mass from t onto t - 1 (t >= 2), and from the
    second copy's t onto t - R + 1, R = n // 2."""
    S, L, n, _ = A.shape
    R = n // 2
    t = np.arange(1, n)
    previous = A[:, :, t, t - 1].mean(axis=(0, 2))
    t = np.arange(R, 2 * R)
    induction = A[:, :, t, t - R + 1].mean(axis=(0, 2))
    return previous, induction


def read_maps(run):
    """{name: (S, L, n, n)} of the attention maps the file holds; RunFileError without any."""
    maps = {name: run._read(f"forward/{name}") for name, _ in SETS if run._has(f"forward/{name}")}
    if not maps:
        raise mft_io.RunFileError(f"{run.path}: no /forward/attention (mft forward --from RUN "
                                  "--output.attention true writes it)")
    for name, A in maps.items():
        if A.ndim != 4 or A.shape[2] != A.shape[3]:
            raise mft_io.RunFileError(f"{run.path}: /forward/{name} has shape {A.shape}, not (S, L, n, n)")
    return maps


def plot(path, maps, sequence):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    L = next(iter(maps.values())).shape[1]
    fig, axes = plt.subplots(len(maps), L, figsize=(3.2 * L, 3.2 * len(maps)), squeeze=False)
    for row, (name, A) in enumerate(maps.items()):
        label = dict(SETS)[name]
        previous, induction = scores(A)
        n = A.shape[2]
        for l in range(L):
            ax = axes[row][l]
            ax.imshow(A[sequence, l], cmap="viridis", vmin=0.0, vmax=max(1e-12, float(A[:, l].max())))
            if name == "attention_probe":  # where an induction head looks
                R = n // 2
                t = np.arange(R, 2 * R)
                ax.plot(t - R + 1, t, "r.", ms=2)
            ax.set_title(f"slice {l}, {label} {sequence}\nprev {previous[l]:.3f}, induction {induction[l]:.3f}",
                         fontsize=8)
            ax.set_xlabel("key token b", fontsize=8)
            ax.set_ylabel("query token a", fontsize=8)
    fig.suptitle(f"{os.path.basename(path)}: head-averaged attention per slice", fontsize=9)
    fig.tight_layout()
    return fig


@mft_io.exit_on_run_file_error
def main(argv=None):
    parser = argparse.ArgumentParser(description=usage_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="an mft forward run file with /forward/attention")
    parser.add_argument("--sequence", type=int, default=0, help="the sequence of each set whose maps are drawn")
    parser.add_argument("-o", "--output", help="the figure (default RUN_attention.png)")
    args = parser.parse_args(argv)
    out = h5checks.figure_output(args.output, os.path.splitext(args.run)[0] + "_attention.png", [args.run])
    run = mft_io.open_run(args.run)
    maps = read_maps(run)
    for name, A in maps.items():
        if not 0 <= args.sequence < A.shape[0]:
            sys.exit(f"error: --sequence {args.sequence}: /forward/{name} holds {A.shape[0]} sequences")
    print(f"{'set':>18} {'slice':>5} {'previous-token':>15} {'induction':>10}")
    for name, A in maps.items():
        previous, induction = scores(A)
        for l in range(A.shape[1]):
            print(f"{dict(SETS)[name]:>18} {l:5d} {previous[l]:15.4f} {induction[l]:10.4f}")
    fig = plot(args.run, maps, args.sequence)
    h5checks.save_figure(fig, out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

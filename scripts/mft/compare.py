"""Compares mft runs: the conditional W2 distance between their particle
measures and the difference of their loss curves.

The particle measure of a run is rho = (1/(M L)) sum_{l,m} delta_{(theta_lm, s_l)}
with theta = (Q, K, V) flattened; its conditional law on slice l is uniform
over the M heads of that slice. The distance printed is

    W2c^2(A, B) = (1/L) sum_l W2^2(rho_A(.|l), rho_B(.|l)),

each W2^2 an exact optimal-transport cost (POT's ot.emd2, squared Euclidean
ground cost, uniform weights 1/M_A and 1/M_B), so runs of different widths
compare. The ground cost sums the squared differences of the coordinates,
so runs with the same particles (bit for bit, in any order of the heads)
are at distance exactly 0. Loss curves are compared on the common range of tau (linear
interpolation of the second run at the first run's tau).

  python3 scripts/compare_runs.py A.h5 B.h5 [C.h5 ...] [-o compare.png] [--snapshot -1]
"""
import argparse
import os
import sys

import numpy as np

from . import h5checks
from . import io as mft_io
from . import runs as runs_module
from .usage import usage_text


def flatten_heads(p, l):
    """The heads of slice l as rows theta_m = (Q_m, K_m, V_m) flattened."""
    M = p["Q"].shape[1]
    return np.hstack([p[s][l].reshape(M, -1) for s in ("Q", "K", "V")])


def squared_distances(xa, xb, rows=256):
    """The cost matrix C_ij = sum_k (xa_ik - xb_jk)^2, summed over the
    squared differences themselves (not |x|^2 + |y|^2 - 2<x, y>, which
    cancels to a rounding error): C_ij is exactly 0 where the rows are
    equal. Computed `rows` rows of xa at a time to bound the memory."""
    cost = np.empty((len(xa), len(xb)))
    for start in range(0, len(xa), rows):
        diff = xa[start:start + rows, None, :] - xb[None, :, :]
        cost[start:start + rows] = np.einsum("ijk,ijk->ij", diff, diff)
    return cost


def w2_squared(xa, xb):
    """W2^2 between the uniform measures on the rows of xa and of xb: the
    exact optimal-transport cost (POT's ot.emd2) of squared_distances.
    Exactly 0.0 when the rows of xa are those of xb in some order (equal
    arrays are not even handed to the solver)."""
    if xa.shape == xb.shape and np.array_equal(xa, xb):
        return 0.0
    import ot
    wa = np.full(len(xa), 1.0 / len(xa))
    wb = np.full(len(xb), 1.0 / len(xb))
    return float(ot.emd2(wa, wb, squared_distances(xa, xb), numItermax=10_000_000))


def conditional_w2_squared(pa, pb):
    """(1/L) sum_l W2^2(rho_A(.|l), rho_B(.|l)) of two snapshots' heads."""
    L = pa["Q"].shape[0]
    return sum(w2_squared(flatten_heads(pa, l), flatten_heads(pb, l)) for l in range(L)) / L


def loss_curve(run):
    """The history of a run (complete rows), or None when it has none or no
    row; RunFileError for a damaged one or one without tau and risk."""
    hist = run.history
    if not hist or len(next(iter(hist.values()))) == 0:
        return None
    return run.training_history(("tau", "risk"))


def curve_difference(ha, hb):
    """Largest |R_A - R_B| and largest relative difference over common tau."""
    if ha is None or hb is None:
        return float("nan"), float("nan")
    ta, ra, tb, rb = ha["tau"], ha["risk"], hb["tau"], hb["risk"]
    sel = (ta >= tb[0]) & (ta <= tb[-1])
    if not sel.any():
        return float("nan"), float("nan")
    rb_at = np.interp(ta[sel], tb, rb)
    diff = np.abs(ra[sel] - rb_at)
    return float(diff.max()), float((diff / np.maximum(np.abs(ra[sel]), 1e-300)).max())


@mft_io.exit_on_run_file_error
def main(argv=None):
    parser = argparse.ArgumentParser(description=usage_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="two or more mft run files")
    parser.add_argument("-o", "--output", help="PNG to write (default: compare_runs.png beside the first run)")
    parser.add_argument("--snapshot", type=int, default=-1,
                        help="complete snapshot compared in every run, negative counting back from the last "
                             "(default -1: the last complete one)")
    args = parser.parse_args(argv)
    if len(args.runs) < 2:
        parser.error("give at least two run files")
    out = h5checks.figure_output(args.output, os.path.join(os.path.dirname(args.runs[0]) or ".", "compare_runs.png"),
                                 args.runs)

    runs = [mft_io.open_run(p) for p in args.runs]
    for r in runs:
        r.require_species("Q", "K", "V")
    curves = [loss_curve(r) for r in runs]
    shapes = {tuple(r.particles(args.snapshot)["Q"].shape[i] for i in (0, 2, 3)) for r in runs}
    if len(shapes) != 1:
        sys.exit("error: the runs differ in L, d_h or d; their particle measures do not compare")
    parts = [r.particles(args.snapshot) for r in runs]
    names = [os.path.basename(p) for p in args.runs]

    print(f"{'run A':>20} {'run B':>20} {'W2c^2':>14} {'max|R_A-R_B|':>14} {'max rel':>10}")
    rows = []
    for i in range(len(runs)):
        for j in range(i + 1, len(runs)):
            w2 = conditional_w2_squared(parts[i], parts[j])
            dmax, rmax = curve_difference(curves[i], curves[j])
            rows.append((names[i], names[j], w2, dmax, rmax))
            print(f"{names[i]:>20} {names[j]:>20} {w2:14.6e} {dmax:14.6e} {rmax:10.3e}")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Each curve labelled by the keys in which the runs differ ('M=4 seed=2').
    configs = [r.config for r in runs]
    keys = runs_module.label_keys(configs) or ["model.heads", "model.slices"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, label, h in zip(names, runs_module.run_labels(configs, keys), curves):
        if h is not None:
            ax.semilogy(h["tau"], h["risk"], label=f"{name}: {label}")
    ax.set_xlabel("training time τ")
    ax.set_ylabel("risk R (log scale)")
    ax.set_title("loss curves; W2c² = (1/L) Σ_l W2²(ρ_A(·|l), ρ_B(·|l)) in the table printed", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    h5checks.save_figure(fig, out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

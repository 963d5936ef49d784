#!/usr/bin/python3
"""Plots the risk R and the objective Q of an mft training run against
training time tau on a log scale, and fits the linear-convergence rate.

Linear (exponential in tau) convergence, which [B] predicts when the V-part
of the NTK is positive definite at initialisation, shows as a straight line:
the script fits log R = a - r tau by least squares over a window of tau and
prints r.

  /usr/bin/python3 scripts/plot_history.py RUN.h5 [-o history.png] [--fit-from TAU] [--fit-to TAU]
"""
import argparse
import os
import sys

import numpy as np

import mft_io


def fit_rate(tau, risk, lo, hi):
    """Least-squares fit of log R = a - r tau over lo <= tau <= hi (R > 0)."""
    sel = (tau >= lo) & (tau <= hi) & (risk > 0)
    if sel.sum() < 2:
        return None
    slope, intercept = np.polyfit(tau[sel], np.log(risk[sel]), 1)
    return -slope, intercept, int(sel.sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="an mft train run file")
    parser.add_argument("-o", "--output", help="PNG to write (default: RUN_history.png)")
    parser.add_argument("--fit-from", type=float, default=None,
                        help="start of the fit window in tau (default: the second half of the run)")
    parser.add_argument("--fit-to", type=float, default=None, help="end of the fit window (default: last tau)")
    args = parser.parse_args()

    run = mft_io.open_run(args.run)
    hist = run.history
    if hist is None or len(hist["tau"]) == 0:
        sys.exit(f"error: {args.run}: no /history (not a training run)")
    cfg = run.config
    tau, R, Q = hist["tau"], hist["risk"], hist["objective"]
    lo = args.fit_from if args.fit_from is not None else tau[0] + 0.5 * (tau[-1] - tau[0])
    hi = args.fit_to if args.fit_to is not None else tau[-1]
    fit = fit_rate(tau, R, lo, hi)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    entropy = str(cfg.get("loss.kind", "squared")) == "cross-entropy"
    ax.semilogy(tau, R, label="risk R = (1/N) Σ_i [lse(ŷ_i) − ⟨y_i, ŷ_i⟩]" if entropy
                else "risk R = (1/2N) Σ_i |ŷ_i − y_i|²")
    if "test_risk" in hist:
        ax.semilogy(tau, hist["test_risk"], "-.", label="held-out risk (never trained on)")
    if "accuracy" in hist:
        acc = ax.twinx()
        acc.plot(tau, hist["accuracy"], color="tab:green", alpha=0.7, label="training accuracy")
        if "test_accuracy" in hist:
            acc.plot(tau, hist["test_accuracy"], "--", color="tab:green", alpha=0.7, label="held-out accuracy")
        acc.set_ylim(0, 1)
        acc.set_ylabel("accuracy")
        acc.legend(fontsize=8, loc="center right")
    if float(cfg.get("train.lambda", 0.0)) > 0:
        ax.semilogy(tau, Q, "--", label="objective Q = R + (λ/2)(1/(ML)) Σ|θ|²")
    if fit is not None:
        rate, intercept, count = fit
        window = (tau >= lo) & (tau <= hi)
        ax.semilogy(tau[window], np.exp(intercept - rate * tau[window]), ":", color="k",
                    label=f"fit exp(−{rate:.3g} τ), τ ∈ [{lo:.3g}, {hi:.3g}]")
    ax.set_xlabel("training time τ (gradient-flow time, M·L time scale)")
    ax.set_ylabel("R, Q (log scale)")
    ax.set_title(f"{os.path.basename(args.run)}: M={cfg['model.heads']} heads × L={cfg['model.slices']} slices, "
                 f"N={cfg['data.sequences']}, task {cfg['data.task']}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    out = args.output or os.path.splitext(args.run)[0] + "_history.png"
    fig.tight_layout()
    fig.savefig(out, dpi=120)

    print(f"run: {args.run}, {len(tau)} history rows, tau in [{tau[0]:.6g}, {tau[-1]:.6g}]")
    print(f"R: {R[0]:.6e} -> {R[-1]:.6e}")
    if "test_risk" in hist:
        print(f"held-out R: {hist['test_risk'][0]:.6e} -> {hist['test_risk'][-1]:.6e}")
    if "accuracy" in hist:
        line = f"accuracy: {hist['accuracy'][0]:.4f} -> {hist['accuracy'][-1]:.4f}"
        if "test_accuracy" in hist:
            line += f", held-out {hist['test_accuracy'][0]:.4f} -> {hist['test_accuracy'][-1]:.4f}"
        print(line)
    if fit is None:
        print("rate: not enough positive R in the fit window")
    else:
        print(f"rate r = {fit[0]:.6e} (R ~ exp(-r tau), fit over tau in [{lo:.6g}, {hi:.6g}], {fit[2]} rows)")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

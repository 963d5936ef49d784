"""Plots the risk R and the objective Q of an mft training run against
training time tau on a log scale, and fits the linear-convergence rate;
with several runs, overlays their risks to compare training methods.

Linear (exponential in tau) convergence, which the NTK analysis predicts
when the V-part of the kernel is positive definite at initialisation, shows
as a straight line. With --fit (or a window, --fit-from/--fit-to) the script
fits log R = a - r tau by least squares over a window of tau, prints r with
the rms of the log residuals, and draws the line only where the curve is a
clean exponential (rms below 0.05: R within about 5 % of the line); a noisy
curve (minibatch, cross-entropy near its floor) gets the rate printed with a
warning and no line.

With two or more runs the figure shows R against tau (left) and against wall
time (right), one colour per run: minibatch risk (sgd, adam) thin and faint,
held-out risk dash-dotted. Each run is labelled by the configuration keys
that differ between the runs ('M=4 seed=2': the symbols of MODEL.md where
a key has one), led by its train.method, batch and Langevin temperature when
those differ, unless --labels names them; a table of final tau,
final R, wall seconds, steps (and, with --fit, the fitted rate) goes to
stdout. Legends sit below the axes, where they hide no curve.

  python3 scripts/plot_history.py RUN.h5 [-o history.png] [--fit] [--fit-from TAU] [--fit-to TAU]
  python3 scripts/plot_history.py A.h5 B.h5 [C.h5 ...] [-o history_compare.png] [--labels a,b,c] [--fit]
"""
import argparse
import os

import numpy as np

from . import h5checks
from . import io as mft_io
from . import runs
from .reference import flag
from .usage import usage_text


CLEAN = 0.05  # the rms of log residuals below which a fit's line is drawn


def fit_rate(tau, risk, lo, hi):
    """Least-squares fit of log R = a - r tau over lo <= tau <= hi (R > 0):
    (r, a, rows, rms of the log residuals), or None with under 2 rows."""
    sel = (tau >= lo) & (tau <= hi) & (risk > 0)
    if sel.sum() < 2:
        return None
    slope, intercept = np.polyfit(tau[sel], np.log(risk[sel]), 1)
    residual = np.log(risk[sel]) - (intercept + slope * tau[sel])
    return -slope, intercept, int(sel.sum()), float(np.sqrt(np.mean(residual ** 2)))


def fitting(args):
    return args.fit or args.fit_from is not None or args.fit_to is not None


def fit_window(tau, args):
    """The fit window: --fit-from/--fit-to, by default the second half of the run."""
    lo = args.fit_from if args.fit_from is not None else tau[0] + 0.5 * (tau[-1] - tau[0])
    hi = args.fit_to if args.fit_to is not None else tau[-1]
    return lo, hi


def load_history(path):
    """The history (its complete rows) and configuration of a run file;
    raises mft.io.RunFileError for a file that is not an mft/1 run, has no
    training history or a damaged one."""
    run = mft_io.open_run(path)
    hist = run.training_history(("step", "tau", "risk", "objective", "wall_time"))
    return hist, run.config


def method_label(cfg):
    """'flow', 'sgd b=4', 'adam + Langevin T=0.01', ... from a run's configuration."""
    method = str(cfg.get("train.method", "flow"))
    label = method
    batch = int(cfg.get("train.batch", 0))
    if 0 < batch < int(cfg.get("data.sequences", 0)) or (batch > 0 and flag(cfg.get("data.online", False))):
        label += f" b={batch}"
    temperature = float(cfg.get("train.temperature", 0.0))
    if temperature > 0:
        label += f" + Langevin T={temperature:g}"
    return label


METHOD_KEYS = ("train.method", "train.batch", "train.temperature")


def default_labels(paths, configs):
    """A legend label per run from the configuration keys that differ
    between the runs: 'M=4 seed=2'; when the method, batch or temperature
    differ, method_label ('sgd b=4') leads. Runs whose configurations agree
    are labelled by method; labels that still collide get the file's
    basename."""
    differing = runs.label_keys(configs)
    others = [k for k in differing if k not in METHOD_KEYS]
    by_keys = runs.run_labels(configs, others)
    method = any(k in METHOD_KEYS for k in differing)
    labels = [" ".join(part for part in (method_label(cfg) if method or not rest else "", rest) if part)
              for cfg, rest in zip(configs, by_keys)]
    return [f"{label} ({os.path.basename(path)})" if labels.count(label) > 1 else label
            for path, label in zip(paths, labels)]


def data_label(cfg):
    """'task icl-linear', or for a data file its name: 'data digits.h5'."""
    task = str(cfg.get("data.task", "?"))
    if task == "file" and cfg.get("data.file"):
        return f"data {os.path.basename(str(cfg['data.file']))}"
    return f"task {task}"


def plot_single(path, hist, cfg, args, plt):
    tau, R, Q = hist["tau"], hist["risk"], hist["objective"]
    lo, hi = fit_window(tau, args)
    fit = fit_rate(tau, R, lo, hi) if fitting(args) else None

    fig, ax = plt.subplots(figsize=(7, 4.5))
    entropy = str(cfg.get("loss.kind", "squared")) == "cross-entropy"
    ax.semilogy(tau, R, label="risk R = (1/N) Σ_i [lse(ŷ_i) − ⟨y_i, ŷ_i⟩]" if entropy
                else "risk R = (1/2N) Σ_i |ŷ_i − y_i|²")
    if "test_risk" in hist:
        ax.semilogy(tau, hist["test_risk"], "-.", label="held-out risk (never trained on)")
    # A task of symbols: its predictors' held-out cross-entropies (/baselines).
    with mft_io.open_run(path) as run:
        baselines, reference = run.baselines, run.baseline_reference
    for name, nats in sorted(baselines.items(), key=lambda item: -item[1]):
        ax.axhline(nats, color="0.4", lw=0.8, ls="-" if name == reference else ":",
                   label=f"held-out CE of the {name} predictor: {nats:.4f} nats")
    handles = []
    if "accuracy" in hist:
        acc = ax.twinx()
        acc.plot(tau, hist["accuracy"], color="tab:green", alpha=0.7, label="training accuracy")
        if "test_accuracy" in hist:
            acc.plot(tau, hist["test_accuracy"], "--", color="tab:green", alpha=0.7, label="held-out accuracy")
        acc.set_ylim(0, 1)
        acc.set_ylabel("accuracy")
        handles = acc.get_legend_handles_labels()[0]
    if float(cfg.get("train.lambda", 0.0)) > 0:
        ax.semilogy(tau, Q, "--", label="objective Q = R + (λ/2)(1/(ML)) Σ|θ|²")
    if fit is not None and fit[3] < CLEAN:
        rate, intercept = fit[:2]
        window = (tau >= lo) & (tau <= hi)
        ax.semilogy(tau[window], np.exp(intercept - rate * tau[window]), ":", color="k",
                    label=f"fit exp(−{rate:.3g} τ), τ ∈ [{lo:.3g}, {hi:.3g}]")
    ax.set_xlabel("training time τ (gradient-flow time, M·L time scale)")
    ax.set_ylabel("R, Q (log scale)")
    ax.set_title(f"{os.path.basename(path)}: M={cfg['model.heads']} heads × L={cfg['model.slices']} slices, "
                 f"N={cfg['data.sequences']}, {data_label(cfg)}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    handles = ax.get_legend_handles_labels()[0] + handles
    ax.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    print(f"run: {path}, {len(tau)} history rows, tau in [{tau[0]:.6g}, {tau[-1]:.6g}]")
    print(f"R: {R[0]:.6e} -> {R[-1]:.6e}")
    if "test_risk" in hist:
        print(f"held-out R: {hist['test_risk'][0]:.6e} -> {hist['test_risk'][-1]:.6e}")
    if "baseline_gap" in hist:
        print(f"gap to the {reference} baseline ({baselines[reference]:.6f} nats): "
              f"{hist['baseline_gap'][0]:+.6f} -> {hist['baseline_gap'][-1]:+.6f} nats")
    if "accuracy" in hist:
        line = f"accuracy: {hist['accuracy'][0]:.4f} -> {hist['accuracy'][-1]:.4f}"
        if "test_accuracy" in hist:
            line += f", held-out {hist['test_accuracy'][0]:.4f} -> {hist['test_accuracy'][-1]:.4f}"
        print(line)
    if fitting(args) and fit is None:
        print("rate: not enough positive R in the fit window")
    elif fit is not None:
        print(f"rate r = {fit[0]:.6e} (R ~ exp(-r tau), fit over tau in [{lo:.6g}, {hi:.6g}], {fit[2]} rows, "
              f"rms of log residuals {fit[3]:.3g})")
        if fit[3] >= CLEAN:
            print(f"warning: R is not a clean exponential over the window (rms of log residuals {fit[3]:.3g} "
                  f">= {CLEAN}): no fit line drawn; the rate summarises a curve that is not a straight line")
    out = output_of([path], args.output)  # written last: a value that cannot be printed leaves no figure
    h5checks.save_figure(fig, out, dpi=120, bbox_inches="tight")
    print(f"wrote {out}")


def plot_compare(paths, histories, labels, args, plt):
    from matplotlib.lines import Line2D

    fig, (by_tau, by_wall) = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    width = max(len(label) for label in labels)
    print(f"{'run':<{width}}  {'final tau':>10}  {'final R':>12}  {'wall s':>9}  {'steps':>7}"
          + (f"  {'rate r':>12}  {'rms':>6}" if fitting(args) else ""))
    for i, (hist, label) in enumerate(zip(histories, labels)):
        colour = f"C{i}"
        tau, R = hist["tau"], hist["risk"]
        for ax, x in ((by_tau, tau), (by_wall, hist["wall_time"])):
            ax.semilogy(x, R, color=colour, label=label)
            if "batch_risk" in hist:
                ax.semilogy(x, hist["batch_risk"], color=colour, linewidth=0.6, alpha=0.35)
            if "test_risk" in hist:
                ax.semilogy(x, hist["test_risk"], "-.", color=colour)
        line = (f"{label:<{width}}  {tau[-1]:>10.6g}  {R[-1]:>12.6e}  {hist['wall_time'][-1]:>9.4g}  "
                f"{int(hist['step'][-1]):>7d}")
        if fitting(args):
            fit = fit_rate(tau, R, *fit_window(tau, args))
            line += f"  {fit[0]:>12.6e}  {fit[3]:>6.3g}" if fit is not None else f"  {'n/a':>12}  {'':>6}"
        print(line)

    styles = []
    if any("batch_risk" in hist for hist in histories):
        styles.append(Line2D([], [], color="gray", linewidth=0.6, alpha=0.5, label="minibatch risk"))
    if any("test_risk" in hist for hist in histories):
        styles.append(Line2D([], [], color="gray", linestyle="-.", label="held-out risk"))
    by_tau.set_xlabel("training time τ (gradient-flow time, M·L time scale)")
    by_wall.set_xlabel("wall time (s)")
    by_tau.set_ylabel("risk R (log scale)")
    for ax in (by_tau, by_wall):
        ax.grid(True, which="both", alpha=0.3)
    handles = by_tau.get_legend_handles_labels()[0] + styles
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 4), fontsize=8, frameon=False)
    out = output_of(paths, args.output)
    fig.tight_layout(rect=(0, 0.06 * (1 + (len(handles) - 1) // 4), 1, 1))
    h5checks.save_figure(fig, out, dpi=120)
    print(f"wrote {out}")
    return fig


def output_of(runs, output):
    """The figure a call writes: -o, else beside the (first) run."""
    if len(runs) == 1:
        return output or os.path.splitext(runs[0])[0] + "_history.png"
    return output or os.path.join(os.path.dirname(runs[0]), "history_compare.png")


@mft_io.exit_on_run_file_error
def main(argv=None):
    parser = argparse.ArgumentParser(description=usage_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="RUN", help="mft train run files (two or more: compare them)")
    parser.add_argument("-o", "--output",
                        help="PNG to write (default: RUN_history.png; for several runs history_compare.png "
                             "in the directory of the first)")
    parser.add_argument("--labels", help="comma-separated legend labels, one per run (several runs only)")
    parser.add_argument("--fit", action="store_true",
                        help="fit the rate of linear convergence (default window: the second half of each run)")
    parser.add_argument("--fit-from", type=float, default=None,
                        help="start of the fit window in tau (implies --fit; default: the second half of the run)")
    parser.add_argument("--fit-to", type=float, default=None,
                        help="end of the fit window (implies --fit; default: last tau)")
    args = parser.parse_args(argv)
    labels = args.labels.split(",") if args.labels is not None else None
    if labels is not None and (len(args.runs) < 2 or len(labels) != len(args.runs)):
        parser.error(f"--labels: {len(labels)} labels for {len(args.runs)} runs "
                     "(needs two or more runs, one label each)")

    h5checks.figure_output(args.output, output_of(args.runs, args.output), args.runs)
    loaded = [load_history(path) for path in args.runs]

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if len(args.runs) == 1:
        plot_single(args.runs[0], *loaded[0], args, plt)
    else:
        histories = [hist for hist, _ in loaded]
        labels = labels or default_labels(args.runs, [cfg for _, cfg in loaded])
        plot_compare(args.runs, histories, labels, args, plt)


if __name__ == "__main__":
    main()

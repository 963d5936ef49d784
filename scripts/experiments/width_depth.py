#!/usr/bin/env python3
"""[A]'s width/depth threshold on the digits, trained to a plateau: past a
size, does the training loss go to zero?

8x8 digits as 4 patch tokens (scripts/make_digits.py), mean readout, 10
classes, cross-entropy; the gradient flow (Euler, dtau = 0.1) for 1500 steps
(tau = 150) on 256 training images, 256 held out. Widths M in {1, 2, 4, 8,
16, 32} at L = 4 and depths L in {1, 2, 4, 8} at M = 8, three seeds; then
the size with the best held-out accuracy on the full 1,438 / 359 split.

Where a run ends (the plateau rule, stated before the runs): "below 0.01"
when its training cross-entropy is below 0.01; else "plateau" when it fell
by less than 5 % over the last fifth of the run; else "still falling".

Baselines on the same splits: logistic regression (scikit-learn, C = 1) and
nearest centroid on the 64 raw pixels.

Criteria, stated before the runs:
  1. width: some M reaches training cross-entropy < 0.01 on every seed while
     M = 1 stays above 0.1 on every seed ([A]: the loss goes to 0 past a size);
  2. depth: the same with L, the smallest being L = 1;
  3. the best mean held-out accuracy on the 256 / 256 split is at least the
     logistic regression's;
  4. on the full split, the chosen size's mean held-out accuracy is at least
     the logistic regression's.

  python3 scripts/experiments/width_depth.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

(--slurm submits the grid; the full-split runs follow locally with
--from-sweep.) Writes width_depth.csv, width_depth-criteria.txt and
exp_width_depth.png.
"""
import copy
import subprocess
import sys
from pathlib import Path

import numpy as np

import baselines
import common
from common import Run

# dtau from pilot runs on the 256 / 256 split: at 0.5 and 0.25 the M = 1,
# L = 4 model diverges within 30 steps; at 0.1 it trains.
FULL = dict(widths=[1, 2, 4, 8, 16, 32], fixed_L=4, depths=[1, 2, 4, 8], fixed_M=8, seeds=[1, 2, 3], steps=1500,
            dtau=0.1, every=25, train=256, test=256)
QUICK = dict(widths=[1, 4], fixed_L=2, depths=[1, 2], fixed_M=2, seeds=[1], steps=20, dtau=0.1, every=2,
             train=32, test=32)
ZERO, HIGH = 0.01, 0.1


def digits_file(options, train=None, test=None):
    """The digits split as an mft data file (None: the whole split)."""
    path = Path(options.runs) / f"digits-{train or 'all'}-{test or 'all'}.h5"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, str(common.SCRIPTS / "make_digits.py"), "--output", str(path), "--force"]
        if train:
            cmd += ["--train-size", str(train), "--test-size", str(test)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return path


def grid(size):
    """(sweep, M, L) of every model: the width sweep, then the depth sweep."""
    return [("width", M, size["fixed_L"]) for M in size["widths"]] + \
           [("depth", size["fixed_M"], L) for L in size["depths"]]


def run_of(split, M, L, seed, data, size):
    return Run(f"{split}-M{M}-L{L}-s{seed}", {
        "data.task": "file", "data.file": data, "readout.kind": "mean", "readout.dim": 10,
        "loss.kind": "cross-entropy", "model.heads": M, "model.slices": L, "init.seed": seed,
        "train.steps": size["steps"], "train.dtau": size["dtau"], "output.history_every": size["every"],
        "output.snapshot_every": size["steps"]})


def summary(paths, split, sweep, M, L, size):
    found, diverged = common.seed_histories(paths, [f"{split}-M{M}-L{L}-s{s}" for s in size["seeds"]])
    row = {"split": split, "sweep": sweep, "M": M, "L": L, "seeds": len(size["seeds"]), "diverged": diverged}
    for key, column in (("risk", "train_ce"), ("accuracy", "train_acc"), ("test_accuracy", "test_acc")):
        row[column], row[column + "_err"] = common.mean_and_error([h[key][-1] for h in found] or [np.nan])
    row["ce_max"] = max([h["risk"][-1] for h in found], default=np.nan)
    row["ce_min"] = min([h["risk"][-1] for h in found], default=np.nan)
    row["ending"] = common.endings_text([common.run_ending(h) for h in found])
    row["curves"] = found
    return row


def pixel_baselines(path):
    import h5py
    with h5py.File(path, "r") as f:  # the data file make_digits.py wrote
        tokens, targets = f["data/tokens"][...], f["data/targets"][...]
        test_tokens, test_targets = f["data/test_tokens"][...], f["data/test_targets"][...]
    pixels = lambda t: t[:, :, :16].reshape(len(t), -1)  # the 64 pixels, without the positions
    args = (pixels(tokens), targets, pixels(test_tokens), test_targets)
    return {"logistic": baselines.logistic_regression_accuracy(*args),
            "centroid": baselines.nearest_centroid_accuracy(*args)}


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    small = digits_file(options, size["train"], size["test"])
    models = dict.fromkeys((M, L) for _, M, L in grid(size))  # M = 8, L = 4 is in both sweeps
    runs = [run_of("small", M, L, s, small, size) for M, L in models for s in size["seeds"]]
    if not options.from_sweep and not options.slurm:
        print(f"[width_depth] {len(runs)} runs of {size['steps']} steps, then 3 on the full split; the full mode "
              "takes about 40 minutes on 2 cores", flush=True)
    paths = common.execute("width_depth", runs, options)
    rows = [summary(paths, "small", sweep, M, L, size) for sweep, M, L in grid(size)]
    best = max((r for r in rows if np.isfinite(r["test_acc"])), key=lambda r: r["test_acc"])

    # The full split with the best size, always run here (after a sweep too).
    local = copy.copy(options)
    local.from_sweep, local.slurm = None, False
    full = digits_file(options) if not options.quick else small
    paths.update(common.execute("width_depth", [run_of("full", best["M"], best["L"], s, full, size)
                                                for s in size["seeds"]], local))
    rows.append(summary(paths, "full", "best", best["M"], best["L"], size))
    base = {"small": pixel_baselines(small), "full": pixel_baselines(full)}
    columns = ["split", "sweep", "M", "L", "seeds", "diverged", "train_ce", "train_ce_err", "ce_min", "ce_max",
               "train_acc", "test_acc", "test_acc_err", "ending"]
    common.write_csv("width_depth", options, columns, rows)
    for r in rows:
        print(f"{r['split']:5} {r['sweep']:5} M={r['M']:<3} L={r['L']}: training CE {r['train_ce']:.4f} +- "
              f"{r['train_ce_err']:.4f} (seeds {r['ce_min']:.4f}..{r['ce_max']:.4f}), training accuracy "
              f"{r['train_acc']:.3f}, held-out {r['test_acc']:.3f} +- {r['test_acc_err']:.3f}; {r['ending']}")
    for split, b in base.items():
        print(f"baselines, {split} split: logistic regression {b['logistic']:.3f}, nearest centroid "
              f"{b['centroid']:.3f}")
    lines = []
    for sweep, var in (("width", "M"), ("depth", "L")):
        sel = [r for r in rows if r["sweep"] == sweep]
        smallest, zero = sel[0], [r for r in sel if r["ce_max"] < ZERO]
        first = f"{var} = {zero[0][var]} (max over seeds {zero[0]['ce_max']:.4f})" if zero else \
            f"none (lowest max over seeds {min(r['ce_max'] for r in sel):.4f})"
        lines.append(common.criterion(
            f"{sweep}: some {var} reaches training cross-entropy < {ZERO} on every seed while {var} = "
            f"{smallest[var]} stays > {HIGH}", bool(zero) and smallest["ce_min"] > HIGH,
            f"first below: {first}; {var} = {smallest[var]}: min over seeds {smallest['ce_min']:.4f}"))
    lines.append(common.criterion(
        "the best held-out accuracy (256 / 256) is at least logistic regression's",
        best["test_acc"] >= base["small"]["logistic"],
        f"M = {best['M']}, L = {best['L']}: {best['test_acc']:.3f} +- {best['test_acc_err']:.3f} vs "
        f"{base['small']['logistic']:.3f}; nearest centroid {base['small']['centroid']:.3f}"))
    whole = rows[-1]
    lines.append(common.criterion(
        "on the full split the same size's held-out accuracy is at least logistic regression's",
        whole["test_acc"] >= base["full"]["logistic"],
        f"{whole['test_acc']:.3f} +- {whole['test_acc_err']:.3f} vs {base['full']['logistic']:.3f}; nearest "
        f"centroid {base['full']['centroid']:.3f}; training CE {whole['train_ce']:.4f}"))
    common.write_criteria("width_depth", options, lines)
    plot(rows, base, size, options)


def plot(rows, base, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4))
    for col, (sweep, var) in enumerate((("width", "M"), ("depth", "L"))):
        sel = [r for r in rows if r["sweep"] == sweep]
        x = [r[var] for r in sel]
        ax = axes[0][col]
        ax.errorbar(x, [r["train_ce"] for r in sel], yerr=[r["train_ce_err"] for r in sel], marker="o",
                    capsize=3, label="mean over seeds (SE)")
        ax.scatter(x, [r["ce_min"] for r in sel], marker="_", color="k", label="seed min / max")
        ax.scatter(x, [r["ce_max"] for r in sel], marker="_", color="k")
        for r in sel:  # diverged seeds, marked where their point would be
            if r["diverged"]:
                ax.text(r[var], 0.97, f"{r['diverged']}/{r['seeds']}\ndiverged", transform=ax.get_xaxis_transform(),
                        ha="center", va="top", fontsize=6, color="r")
        ax.axhline(ZERO, color="g", ls=":", lw=0.8, label=f"{ZERO} (loss -> 0)")
        ax.axhline(HIGH, color="r", ls=":", lw=0.8, label=f"{HIGH}")
        ax.set_yscale("log")
        fixed = f"L = {size['fixed_L']}" if sweep == "width" else f"M = {size['fixed_M']}"
        ax.set_xscale("log", base=2)
        ax.set_xlabel(f"{var} ({fixed})")
        ax.set_ylabel(f"training cross-entropy at tau = {size['steps'] * size['dtau']:g}")
        ax.grid(alpha=0.3, which="both")
        ax = axes[1][col]
        ax.errorbar(x, [r["test_acc"] for r in sel], yerr=[r["test_acc_err"] for r in sel], marker="s", capsize=3,
                    label="held-out accuracy")
        ax.plot(x, [r["train_acc"] for r in sel], "o--", color="C1", label="training accuracy")
        ax.axhline(base["small"]["logistic"], color="k", ls="-.", lw=0.8, label="logistic regression")
        ax.axhline(base["small"]["centroid"], color="k", ls=":", lw=0.8, label="nearest centroid")
        ax.set_xscale("log", base=2)
        ax.set_xlabel(f"{var} ({fixed})")
        ax.set_ylabel("accuracy (share of images)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, loc="lower left")
    axes[1][0].legend(fontsize=7, loc="lower right")
    common.save_figure(fig, "width_depth", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

#!/usr/bin/env python3
"""[A]'s width/depth threshold on the digits: past a size, does the
training loss keep falling towards zero while the smallest models stall?

8x8 digits as 4 patch tokens (scripts/make_digits.py), mean readout, 10
classes, cross-entropy, the whole split: its 1,438 training images are cut
once (stats.validation_split, seed 0) into 1,150 that are trained on and
288 that choose a size (the validation images, each run's held-out set);
the split's 359 test images judge what was chosen and nothing else. The
gradient flow (Euler, dtau = 0.025) for 4000 steps (tau = 100), a history
row every 20 steps. Widths M in {1, 2, 4, 8, 16} at L = 1 and depths
L in {1, 2, 4} at M = 8, seeds 1..5 (init.seed; every seed trains on the
same images, so sizes are compared paired by seed). Every interval is the
95 % Student-t interval over the seeds (4 dof with five).

Why these. The 1,150 images are more than the earlier 256, which every
size interpolated; M = 1, L = 1 is the smallest model there is, so if it
does not stall here [A]'s stall is not reached on the digits by tau = 100
(criterion 1 fails), and the rest of the criteria ask how far size moves
the loss. The width sweep is at L = 1 because a step's time grows with L
and barely with M; the depth sweep at M = 8 because M = 1 with four
slices oscillates at this step (pilots below). One step for every size:
at dtau = 0.1 and 0.05 the M = 1, L = 1 runs jump several-fold within a
few rows; at 0.025 and at 0.01 R still rises between some rows in the
one-slice models (a tenfold smaller step leaves them; why is not
resolved here), which the fitted line over the last fifth averages and the
CSV reports (the largest rise per size).

Where a run ends, a rule on its training history stated before the runs
(the drivers' rule, common.py): the line fitted to log R against tau over the last fifth
of the run gives R's relative change over that fifth, c = exp(slope span)
- 1 ("plateau" when |c| < 5 %, "still falling" when c <= -5 %, "rising"
when c >= 5 %), and the run's final R, read off that line at its end (R
oscillates from row to row in the one-slice models, below). A size
"stalls" when the interval of c lies inside +-5 % and that of log R above
log 0.1 (a plateau clearly above zero); it "falls towards 0" when the
interval of c lies below -5 % and every seed classifies every training
image (the cross-entropy can fall to 0 only then, as the margins grow). A
still-falling run has not ended: its final R is an upper bound on where it
would end, and is reported as such.

Chosen on the validation images: the size with the best mean validation
accuracy over the seeds (stats.best_on_validation, over every size of both
sweeps); its particles at the end predict the 359 test images (`mft
forward`, every run's). Baselines on the same 1,150 training and 359 test
images: logistic regression (scikit-learn, C = 1) and nearest centroid on
the 64 pixels.

Criteria, stated before the runs:
  1. the smallest model (M = 1, L = 1) stalls (above);
  2. width: the widest (M = 16) falls towards 0 (above);
  3. depth: the deepest (L = 4) falls towards 0;
  4. width: the widest ends at least 10 times lower than the smallest: the
     interval of log(R_smallest / R_widest), paired by seed, lies above
     log 10;
  5. depth: the same for L = 4 against L = 1 (at M = 8);
  6. width: R falls with M: each seed's log-log slope of its final R
     against M (stats.per_seed_slopes), interval below 0;
  7. depth: the same against L;
  8. the size chosen on validation beats nearest centroid on the test
     images: its accuracy's interval lies above nearest centroid's;
  9. the same against logistic regression.
Each can fail: 1 if the smallest model still falls (or its seeds scatter
over more than +-5 %), or stalls below 0.1; 2-3 if the largest has reached
a plateau or still misclassifies a training image; 4-5 if size buys less
than a factor 10 by tau = 100; 6-7 if R does not fall with size; 8-9 if
the chosen size is no better than the baseline or its seeds scatter. A
seed that diverges drops out of its size's intervals and is counted.

What was seen before these were stated: the earlier design's results (256
training images, dtau = 0.1, three seeds): every size down to M = 1
interpolated (training accuracy 1, R <= 0.023 at tau = 150), two of three
M = 1, L = 4 runs diverged; held-out accuracy 0.80 (M <= 2) to 0.91, on
the full split 0.959 (M = 8, L = 8) against logistic regression's 0.953.
Pilot runs on these 1,150 / 288 images, seed 1 unless said (R, training
and validation accuracy; "rises": rows whose R exceeds the row before):
M = 1, L = 1 at dtau = 0.1 to tau = 300: R 58 at the start, 0.28-0.36 for
tau in [60, 120], a spike to 1.8 at tau = 127, 0.36 at tau = 300 (0.88,
0.82). At dtau = 0.05 to tau = 200: R 0.145 at tau = 140 (c -22 %), 0.42
at tau = 160 after a spike, 0.17 at 200; seed 2: 0.098 at tau = 160, 0.45
at 180 after a spike. At dtau = 0.025 to tau = 100: R 0.34, 0.20, 0.17 at
tau = 40, 80, 100, c -17 % (0.956, 0.844), rises in 23 of 160 rows, the
largest +22 %; seed 3: R 0.26, c -26 % (0.916, 0.802), rises in 42 of 160,
the largest +94 %. At dtau = 0.01 to tau = 80, seed 3: R 0.32, c -19 %
(0.903, 0.840), rises in 80 of 320, the largest +46 %: a smaller step does
not remove them. M = 4, L = 1, dtau = 0.025, tau = 80, seed 3: R 0.063
(0.990), rises up to +96 %. M = 16, L = 1 at dtau = 0.1 to tau = 300: R
0.034, 0.016, 0.0065, 0.0022 at tau = 60, 90, 150, 300, c -28 % to -35 %
from tau = 60 on, training accuracy 1 from tau = 90, validation 0.941 at
tau = 60 and 0.958-0.962 from tau = 120, rises up to +20 %. With head
dimension 1 and 2 (M = 1, L = 1, dtau = 0.05, tau = 150): R 0.23 and
0.21, c -12 % and -11 % (0.934, 0.868; 0.939, 0.889); 16 heads of
dimension 1: R 0.021, c -38 % (0.999, 0.934). M = 1, L = 4 at
dtau = 0.025 to tau = 50: R 0.10 at tau = 40, oscillating from tau = 28,
a spike to 0.18 at tau = 45 (0.980, 0.892); so the depth sweep is at
M = 8, where M = 8, L = 4 at dtau = 0.025 to tau = 60 fell with no rise:
R 0.0074 (c -36 %), training accuracy 1 from tau = 36, validation
0.944-0.951. No pilot run diverged. Short timing runs
at dtau = 0.1 (M = 1, L = 2: R 1.13 at tau = 20; M = 8, L = 2: 0.43 at
tau = 10; M = 32, L = 2; M = 1, L = 8; M = 1, L = 1) and at dtau = 0.025
for 300 steps (M = 2 and 8 at L = 1, M = 8 at L = 2; timing only).
Seconds a step, the 2 cores shared with another sweep: 0.029-0.044 for
M = 1, 2, 4, 8 at L = 1, 0.057 for M = 16; 0.058 for M = 8, L = 2; 0.12
for M = 8, L = 4;
0.24 for M = 32, L = 2; 0.068 and 0.27 for M = 1 at L = 2 and 8 (time
grows with L, barely with M up to 8).

  python3 scripts/experiments/width_depth.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

(--slurm submits the training runs; the forward passes follow locally
with --from-sweep.) 35 runs of 4000 steps, 0.36 s a step summed over the
seven sizes at those rates: about 60 minutes on 2 cores. Writes
width_depth.csv (per sweep and size: the seeds, diverged, the largest rise
of R between history rows, the final R's geometric mean over seeds with
its interval, c with its interval and the runs' endings, the training,
validation and test accuracies, the test accuracy's interval, the size
chosen), width_depth-criteria.txt and exp_width_depth.png (the training
curves, and what each criterion tests with its intervals).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import copy
import subprocess
import sys
from pathlib import Path

import numpy as np

import baselines
import common
import stats
from common import Run

FULL = dict(widths=[1, 2, 4, 8, 16], fixed_L=1, depths=[1, 2, 4], fixed_M=8, seeds=[1, 2, 3, 4, 5], steps=4000,
            dtau=0.025, every=20, train=None, test=None)
QUICK = dict(widths=[1, 2], fixed_L=1, depths=[1, 2], fixed_M=2, seeds=[1, 2], steps=20, dtau=0.025, every=2,
             train=64, test=32)
VALIDATION = 0.2   # share of the training split that chooses the size
SPLIT_SEED = 0
FLOOR = 0.1        # a stall's R lies above this: clearly above zero
DROP = 10.0        # criteria 4-5: the largest ends at least this many times lower
COLUMNS = ["sweep", "M", "L", "seeds", "diverged", "largest_rise", "risk", "risk_low", "risk_high", "change",
           "change_low", "change_high", "ending", "train_acc", "validation", "test_acc", "test_acc_low",
           "test_acc_high", "chosen"]

interval = stats.finite_interval  # over the seeds that did not diverge; None below two


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


def split_files(options, size):
    """The training file (trained-on images, the validation images as its
    held-out set), the test file, and the pixel arrays of the three."""
    import h5py
    with h5py.File(digits_file(options, size["train"], size["test"]), "r") as f:
        tokens, targets = f["data/tokens"][()], f["data/targets"][()]
        test = (f["data/test_tokens"][()], f["data/test_targets"][()])
    choose, fit = stats.validation_split(len(targets), VALIDATION, SPLIT_SEED)
    folder = Path(options.runs) / ("width_depth-quick" if options.quick else "width_depth")
    training = common.content_file(folder, "digits-fit", {
        "data/tokens": tokens[fit], "data/targets": targets[fit],
        "data/test_tokens": tokens[choose], "data/test_targets": targets[choose]})
    pixels = lambda t: t[:, :, :16].reshape(len(t), -1)  # the 64 pixels, without the positions
    arrays = {"fit": (pixels(tokens[fit]), targets[fit]), "validation": (pixels(tokens[choose]), targets[choose]),
              "test": (pixels(test[0]), test[1])}
    return training, common.data_file(folder, "digits-test", *test), arrays, test[1]


def sizes(size):
    """(sweep, M, L) of every model: the width sweep, then the depth sweep
    (M = fixed_M, L = fixed_L is in both)."""
    return [("width", M, size["fixed_L"]) for M in size["widths"]] + \
           [("depth", size["fixed_M"], L) for L in size["depths"]]


def run_name(M, L, seed):
    return f"M{M}-L{L}-s{seed}"


READOUT = {"readout.kind": "mean", "readout.dim": 10, "loss.kind": "cross-entropy"}


def fitted_end(history):
    """R at the end of the run on the line fitted to log R over its last
    fifth (common.change's line): a single row can sit on an oscillation."""
    tau, risk = np.asarray(history["tau"], float), np.asarray(history["risk"], float)
    keep = tau >= common.last_fifth(history) - 1e-12
    if keep.sum() < 2 or np.any(risk[keep] <= 0):
        return float(risk[-1])
    slope, intercept = np.polyfit(tau[keep], np.log(risk[keep]), 1)
    return float(np.exp(intercept + slope * tau[-1]))


def measured(paths, models, size, test_targets):
    """{(M, L): {seed: what its run measured}} over the seeds that did not
    diverge."""
    import h5py
    per = {}
    for M, L in models:
        per[M, L] = {}
        for s in size["seeds"]:
            name = run_name(M, L, s)
            if name not in paths:
                continue
            h, _ = common.history(paths[name])
            with h5py.File(paths[f"{name}-test"], "r") as f:
                predictions = np.asarray(f["forward/predictions"][()], float)
            c, risk = common.change(h, common.last_fifth(h)), np.asarray(h["risk"], float)
            per[M, L][s] = {"risk": fitted_end(h), "change": c, "ending": common.ending(c),
                            "rise": float(np.max(np.diff(risk) / risk[:-1], initial=-np.inf)),
                            "train_acc": float(h["accuracy"][-1]), "validation": float(h["test_accuracy"][-1]),
                            "test_acc": float(np.mean(np.argmax(predictions, 1) == np.argmax(test_targets, 1))),
                            "per_step": (h["wall_time"][-1] - h["wall_time"][0]) / max(1, h["step"][-1] - h["step"][0]),
                            "curve": (np.asarray(h["tau"], float), np.asarray(h["risk"], float))}
    return per


def log_interval(got):
    return interval([np.log(v["risk"]) for v in got.values() if v["risk"] > 0])


def table(per, size, chosen):
    rows = []
    for sweep, M, L in sizes(size):
        got = per[M, L]
        iv = {"risk": log_interval(got), "change": interval([v["change"] for v in got.values()]),
              "test_acc": interval([v["test_acc"] for v in got.values()])}
        row = {"sweep": sweep, "M": M, "L": L, "seeds": len(size["seeds"]), "diverged": len(size["seeds"]) - len(got),
               "ending": common.endings_text([v["ending"] for v in got.values()]),
               "chosen": "yes" if (M, L) == chosen else "", "intervals": iv}
        for key in ("train_acc", "validation"):
            row[key] = np.mean([v[key] for v in got.values()]) if got else np.nan
        row["largest_rise"] = max((v["rise"] for v in got.values()), default=np.nan)
        for key, i in iv.items():
            values = (i.value, i.low, i.high) if i else (np.nan,) * 3
            row[key], row[key + "_low"], row[key + "_high"] = np.exp(values) if key == "risk" else values
        rows.append(row)
    return rows


def fmt(iv, scale=None):
    if iv is None:
        return "fewer than two seeds"
    return iv.text() + (f" (exp: {np.exp(iv.value):.3g} [{np.exp(iv.low):.3g}, {np.exp(iv.high):.3g}])"
                        if scale == "log" else "")


def stalls(got):
    c, r = interval([v["change"] for v in got.values()]), log_interval(got)
    flat = c is not None and -common.PLATEAU < c.low and c.high < common.PLATEAU
    return flat and r is not None and r.above(np.log(FLOOR)), c, r


def falls(got):
    c = interval([v["change"] for v in got.values()])
    every = len(got) >= 2 and all(v["train_acc"] == 1 for v in got.values())
    return c is not None and c.below(-common.PLATEAU) and every, c


def criteria(per, size, chosen, base):
    smallest = (size["widths"][0], size["fixed_L"])
    lines = []
    ok, c, r = stalls(per[smallest])
    lines.append(common.criterion(
        f"the smallest model (M = {smallest[0]}, L = {smallest[1]}) stalls: R's fitted relative change over the last "
        f"fifth has an interval inside +-{common.PLATEAU:.0%} and log R an interval above log {FLOOR:g}", ok,
        f"change {fmt(c)}; log R {fmt(r, 'log')}; "
        f"{common.endings_text([v['ending'] for v in per[smallest].values()])}"))
    sweeps = {"width": ("M", [(M, size["fixed_L"]) for M in size["widths"]], size["widths"]),
              "depth": ("L", [(size["fixed_M"], L) for L in size["depths"]], size["depths"])}
    for sweep, (var, models, x) in sweeps.items():
        ok, c = falls(per[models[-1]])
        got = per[models[-1]]
        accuracies = ", ".join(f"{v['train_acc']:.4f}" for v in got.values())
        lines.append(common.criterion(
            f"{sweep}: the largest ({var} = {x[-1]}) falls towards 0: R's relative change over the last fifth has an "
            f"interval below -{common.PLATEAU:.0%} and every seed classifies every training image", ok,
            f"change {fmt(c)}; training accuracy per seed {accuracies}; log R {fmt(log_interval(got), 'log')}; "
            f"{common.endings_text([v['ending'] for v in got.values()])}"))
    for sweep, (var, models, x) in sweeps.items():
        small, large = per[models[0]], per[models[-1]]
        both = [s for s in small if s in large]
        text = (f"{sweep}: {var} = {x[-1]} ends at least {DROP:g} times lower than {var} = {x[0]} "
                f"(log(R_smallest / R_largest), paired by seed, interval above log {DROP:g})")
        if len(both) < 2:
            lines.append(common.criterion(text, False, "fewer than two seeds with both runs"))
            continue
        d = stats.paired([np.log(small[s]["risk"]) for s in both], [np.log(large[s]["risk"]) for s in both])
        lines.append(common.criterion(text, d.above(np.log(DROP)), fmt(d, "log")))
    for sweep, (var, models, x) in sweeps.items():
        every = [s for s in size["seeds"] if all(s in per[m] for m in models)]
        text = f"{sweep}: R falls with {var} (each seed's log-log slope of its final R against {var}, interval below 0)"
        if len(every) < 2:
            lines.append(common.criterion(text, False, "fewer than two seeds with every run"))
            continue
        slope = stats.per_seed_slopes(x, [[per[m][s]["risk"] for m in models] for s in every])["slope"]
        lines.append(common.criterion(text, slope.below(0.0), f"slope {slope.text()}; {len(every)} seeds"))
    acc = interval([v["test_acc"] for v in per[chosen].values()])
    scores = "validation accuracy, mean over seeds: " + ", ".join(
        f"M = {M}, L = {L} {np.mean([v['validation'] for v in got.values()]):.4g}"
        for (M, L), got in per.items() if got)
    for label, key in (("nearest centroid", "centroid"), ("logistic regression", "logistic")):
        lines.append(common.criterion(
            f"the size chosen on validation beats {label} on the test images (its accuracy's interval above "
            f"{label}'s)", acc is not None and acc.above(base["test"][key]),
            f"chosen M = {chosen[0]}, L = {chosen[1]}: {fmt(acc)} vs {base['test'][key]:.4f}; {scores}"))
    return lines


def pixel_baselines(arrays):
    fit = arrays["fit"]
    return {part: {"logistic": baselines.logistic_regression_accuracy(*fit, *arrays[part]),
                   "centroid": baselines.nearest_centroid_accuracy(*fit, *arrays[part])}
            for part in ("validation", "test")}


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    training, test_file, arrays, test_targets = split_files(options, size)
    models = list(dict.fromkeys((M, L) for _, M, L in sizes(size)))
    runs = [Run(run_name(M, L, s), {
        "data.task": "file", "data.file": training, **READOUT, "model.heads": M, "model.slices": L, "init.seed": s,
        "train.steps": size["steps"], "train.dtau": size["dtau"], "output.history_every": size["every"],
        "output.snapshot_every": size["steps"]}) for M, L in models for s in size["seeds"]]
    if not options.from_sweep and not options.slurm:
        print(f"[width_depth] {len(runs)} runs of {size['steps']} steps, then their forward passes on the test "
              "images; the full mode takes about 60 minutes on 2 cores", flush=True)
    paths = common.execute("width_depth", runs, options)
    # The particles at the end on the test images (always rerun: cheap, and
    # never from an older run's particles).
    local = copy.copy(options)
    local.from_sweep, local.slurm, local.fresh = None, False, True
    paths.update(common.execute("width_depth", [Run(f"{name}-test", {
        "data.task": "file", "data.file": test_file, "init.file": str(paths[name]), "init.snapshot": -1, **READOUT},
        command="forward") for name in [r.name for r in runs] if name in paths], local))

    per = measured(paths, models, size, test_targets)
    chosen = stats.best_on_validation({m: 1 - np.mean([v["validation"] for v in per[m].values()])
                                       for m in models if per[m]})
    base = pixel_baselines(arrays)
    rows = table(per, size, chosen)
    common.write_csv("width_depth", options, COLUMNS, rows)
    for r in rows:
        print(f"{r['sweep']:5} M={r['M']:<3} L={r['L']}: R {r['risk']:.4g} [{r['risk_low']:.4g}, "
              f"{r['risk_high']:.4g}], change {r['change']:+.3f} [{r['change_low']:+.3f}, {r['change_high']:+.3f}] "
              f"({r['ending']}); accuracy: training {r['train_acc']:.3f}, validation {r['validation']:.3f}, test "
              f"{r['test_acc']:.3f} [{r['test_acc_low']:.3f}, {r['test_acc_high']:.3f}]"
              f"{' (chosen)' if r['chosen'] else ''}; largest rise of R between history rows {r['largest_rise']:+.3g}")
    for part, b in base.items():
        print(f"baselines on the {part} images: logistic regression {b['logistic']:.4f}, nearest centroid "
              f"{b['centroid']:.4f}")
    timing = {m: np.mean([v["per_step"] for v in per[m].values()]) for m in models if per[m]}
    print("seconds a step: " + ", ".join(f"M = {M}, L = {L} {t:.3g}" for (M, L), t in timing.items()))
    common.write_criteria("width_depth", options, criteria(per, size, chosen, base))
    plot(per, size, base, chosen, options)


def bar(ax, x, iv, exp=False, **style):
    if iv is not None:
        v, lo, hi = (np.exp([iv.value, iv.low, iv.high]) if exp else (iv.value, iv.low, iv.high))
        ax.errorbar(x, v, yerr=[[v - lo], [hi - v]], capsize=3, **style)


def plot(per, size, base, chosen, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.4))
    level = f"{100 * stats.LEVEL:g} % t over {len(size['seeds'])} seeds"
    tau = size["steps"] * size["dtau"]
    sweeps = (("width", "M", [(M, size["fixed_L"]) for M in size["widths"]], size["widths"], f"L = {size['fixed_L']}"),
              ("depth", "L", [(size["fixed_M"], L) for L in size["depths"]], size["depths"], f"M = {size['fixed_M']}"))
    for ax, (sweep, var, models, x, fixed) in zip(axes[0][:2], sweeps):
        for j, (m, value) in enumerate(zip(models, x)):
            curves = [v["curve"] for v in per[m].values()]
            if not curves or any(len(c[0]) != len(curves[0][0]) for c in curves):
                ax.plot([], [], color=f"C{j}", label=f"{var} = {value}: diverged or missing")
                continue
            ax.plot(curves[0][0], np.exp(np.mean([np.log(c[1]) for c in curves], axis=0)), color=f"C{j}",
                    label=f"{var} = {value}")
        ax.axhline(FLOOR, color="r", ls=":", lw=0.8, label=f"{FLOOR:g} (a stall lies above)")
        ax.axvspan(0.8 * tau, tau, color="0.85", label="last fifth")
        ax.set_yscale("log")
        ax.set_xlabel(f"training time tau (dtau = {size['dtau']:g})")
        ax.set_ylabel(f"{sweep} ({fixed}): training cross-entropy (geometric mean)")
    ax = axes[0][2]
    for i, (sweep, var, models, x, fixed) in enumerate(sweeps):
        for j, (m, value) in enumerate(zip(models, x)):
            bar(ax, np.log2(value) + 0.1 * (i - 0.5), interval([v["change"] for v in per[m].values()]),
                marker="os"[i], color=f"C{i}", label=f"{sweep}: {var} ({fixed})" if j == 0 else None)
    ax.axhspan(-common.PLATEAU, common.PLATEAU, color="0.6", alpha=0.4,
               label=f"plateau (+-{common.PLATEAU:.0%})")
    ax.set_xlabel("log2 of the size (M or L)")
    ax.set_ylabel("R's fitted relative change over the last fifth")
    ax.set_title(f"criteria 1-3 (ending); {level}", fontsize=9)
    ax = axes[1][0]
    for i, (sweep, var, models, x, fixed) in enumerate(sweeps):
        for j, (m, value) in enumerate(zip(models, x)):
            bar(ax, value * 1.05 ** (i - 0.5), log_interval(per[m]), exp=True, marker="os"[i], color=f"C{i}",
                label=f"{sweep}: {var} ({fixed})" if j == 0 else None)
        every = [s for s in size["seeds"] if all(s in per[m] for m in models)]
        if len(every) >= 2 and len(x) >= 2:
            fit = stats.per_seed_slopes(x, [[per[m][s]["risk"] for m in models] for s in every])
            b = fit.estimates.mean(axis=0)
            ax.plot(x, np.exp(b[0]) * np.asarray(x, float) ** b[1], color=f"C{i}", ls="--", lw=0.8,
                    label=f"{sweep}: slope {fit['slope'].text(2)}")
    ax.axhline(FLOOR, color="r", ls=":", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("size (M or L)")
    ax.set_ylabel(f"training cross-entropy at tau = {tau:g} (fitted)")
    ax.set_title(f"criteria 1-3, 6-7; geometric mean, {level}", fontsize=9)
    ax = axes[1][1]
    for i, (sweep, var, models, x, fixed) in enumerate(sweeps):
        small, large = per[models[0]], per[models[-1]]
        both = [s for s in small if s in large]
        if len(both) >= 2:
            bar(ax, i, stats.paired([np.log(small[s]["risk"]) for s in both],
                                    [np.log(large[s]["risk"]) for s in both]), exp=True, marker="os"[i],
                color=f"C{i}", label=f"{sweep}: {var} = {x[0]} over {var} = {x[-1]}")
    ax.axhline(DROP, color="k", ls="--", lw=0.8, label=f"x{DROP:g} (criteria 4-5)")
    ax.axhline(1, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks([0, 1])
    ax.set_xticklabels(["width", "depth"])
    ax.set_ylabel("R_smallest / R_largest, paired by seed")
    ax.set_title(f"criteria 4-5; geometric mean, {level}", fontsize=9)
    ax = axes[1][2]
    for k, m in enumerate(dict.fromkeys(list(sweeps[0][2]) + list(sweeps[1][2]))):
        star = m == chosen
        bar(ax, k, interval([v["test_acc"] for v in per[m].values()]), marker="*" if star else "o",
            ms=12 if star else 6, color="C3" if star else "C0",
            label="test, chosen on validation" if star else ("test" if k == 0 else None))
        if per[m]:
            ax.plot(k + 0.2, np.mean([v["validation"] for v in per[m].values()]), "x", color="0.4",
                    label="validation (mean)" if k == 0 else None)
            ax.plot(k - 0.2, min(v["train_acc"] for v in per[m].values()), "^", color="C2",
                    label="training (lowest seed; criteria 2-3)" if k == 0 else None)
    ax.axhline(base["test"]["logistic"], color="k", ls="-.", lw=0.8, label="logistic regression (test)")
    ax.axhline(base["test"]["centroid"], color="k", ls=":", lw=0.8, label="nearest centroid (test)")
    labels = [f"M{M} L{L}" for M, L in dict.fromkeys(list(sweeps[0][2]) + list(sweeps[1][2]))]
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, fontsize=7)
    ax.set_ylabel("accuracy (share of images)")
    ax.set_title(f"criteria 8-9 (test images); {level}", fontsize=9)
    common.finish_axes([a for r in axes for a in r], legend_size=6)
    common.save_figure(fig, "width_depth", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

#!/usr/bin/env python3
"""[A]'s width/depth threshold on the digits: past a size, does the
training loss go to zero while the smallest models stall?

8x8 digits as 4 patch tokens (scripts/make_digits.py), mean readout, 10
classes, cross-entropy. The split's 1,438 training images are cut once
(stats.validation_split, seed 0) into 1,150 trained on and 288 that choose
a size; the 359 test images judge only the choice, against logistic
regression (C = 1) and nearest centroid on the 1,150 images' pixels. Widths
M in {1, 2, 4, 8, 16} at L = 1 to tau = 150; depths L in {1, 2, 4} at
M = 8, L = 2 and 4 to tau = 60. Seeds 12..16, the depth sweep's also 17,
the size chosen on validation further seeds up to 7 (paired: every seed
trains on the same images); seeds 1..11 were pilots. Intervals: 95 %
Student-t over the seeds.

Where a run ends (the drivers' rule, common.run_ending): "interpolated"
(R <= 1e-10 R(0)) or "separated" (99 % of the 1,150 images with a logit
margin of log 9, from `mft forward --from` the run at its end), else R's
fitted change c over the last fifth: "plateau" (|c| < 5 %), "still
falling", "rising". A separating run's R falls like 1/tau and never
plateaus: it has ended when it separates. A size "stalls" when every seed
ends on a plateau; it "falls towards 0" when every seed separates or
interpolates.

Steps: gradient descent at a stated step, not the flow. mft's ntk.every
records 2 N / lambda_max(K_all), the squared loss's stable Euler step; the
cross-entropy's linearised one is 2 N / lambda_max(H^1/2 K H^1/2),
H = diag(p) - p p^T per image. The first is 30-1,000 times below steps at
which runs are smooth; the second tells the smooth runs (M = 16, L = 4:
0.07 against dtau = 0.025) from those whose R rises (M <= 8 at L = 1,
L = 2: 0.001 to 0.0075, falling as training goes on: the sharpness grows
until Euler steps sit at the edge of their stability). Below it the flow
itself would be followed, but at M = 4 (0.0011 at tau = 50) that is about
140,000 steps a run, 3.3 h on 2 cores for the five seeds of M = 4 alone.
Nor is halving the step a remedy within reach: this design's first form
(the step halved, every seed, when a run's R doubled; seeds 6..10) stopped
after M = 1, 2, whose R doubled between rows in 2 and 3 of 5 seeds at
dtau = 0.0125 (x2.6, x4.6; x4.2, x4.3, x12.9: spikes of one to three rows
that fall back, catapults at the edge of stability); rerun at 0.00625,
M = 2's seed 7 still spiked x14.5 (at tau = 136 instead of 128; R at its
end 0.041 against 0.059), M = 1's seed 10 did not (x1.33) and ended lower
(0.108 against 0.284), and one halving of M = 1, 2, 4 would add about 95
minutes to the design's 2 hours. The step changes where a small model is
at tau = 150. So every model trains by Euler steps of the flow at its
stated step (0.0125 for M = 1, 2, 4 and L = 2, whose pilots jumped at
0.025; 0.025 for M = 8, 16 and L = 4), and the criteria speak of that
training, gradient descent on the particles, as [A]'s own experiments do
of theirs. A catapult (R at least doubling between two of a run's 200
history rows: the flow never raises R) is counted per model and drawn;
both linearised steps are reported at the end of each model's first seed
(`mft ntk` in 6 blocks of the images: lambda_max(K) <= sum over the
blocks, so the step from the sum is a lower bound).

Sanity checks: (a) no run ends inside a catapult: its last R lies within
a factor 2 of the lowest R of its last fifth (the ending is read there);
(b) each training forward's R equals its run's last R within 1e-9 (the
logits are the run's end).
Criteria, stated before the runs:
  1. the smallest model (M = 1, L = 1) stalls by tau = 150;
  2. width: the widest (M = 16) falls towards 0 by tau = 150;
  3. depth: the deepest (L = 4) falls towards 0 by tau = 60;
  4. width: a threshold: for some M* > 1 in the sweep, every seed of every
     M >= M* reaches an end and no seed of a smaller M does;
  5. width: R falls with M: each seed's log-log slope of R at tau = 60
     (fitted to log R over [48, 60]) against M, interval below 0;
  6. depth: the same against L (6 seeds);
  7. the size chosen on validation (mean accuracy over its seeds 12..16
     or 17) beats nearest centroid on the test images: its accuracy's
     interval over 7 seeds above nearest centroid's;
  8. the same against logistic regression.
Each can fail: 1 if a seed of M = 1 still falls, rises or separates; 2-3
if a seed of the largest stops short of the margin by its budget; 4 if a
size splits or a smaller size separates where a larger does not; 5-6 if R
does not fall with size or the seeds scatter; 7-8 if the chosen size is no
better than the baseline or its seeds scatter. A diverged seed drops out
and is counted.

Restated from the earlier design: its criterion 1 (c's interval inside
+-5 %, half-width 0.15: it could not have held; log R above log 0.1) and
2-3 (c below -5 %, every image classified) become the endings above; its
4-5 (the largest ends 10 times lower) become 4: a separated run's R falls
like 1/tau, so a ratio of final R's measures the budget, and the threshold
is the split of the endings (depth has none to show: M = 8 at L = 1
separates).

Power (stats.Plan, from the earlier design's seeds 1..5, excluded): slope
-1.04 [-1.34, -0.741] (spread 0.24): 5 seeds give a half-width of 0.30
against its distance 1.04 from 0 (criterion 5); -0.866 [-1.75, 0.020]
(spread 0.71): 6 seeds give 0.75 against 0.87 (6); the chosen size's test
accuracy 0.9409 [0.9331, 0.9488] (spread 0.0064): 7 seeds give 0.0059
against nearest centroid's distance 0.050 (7) and logistic regression's
0.0062, on the far side (8). Criteria 1-4 count endings: no plan.

What was seen before these were stated: the earlier results (dtau = 0.025,
tau = 100, seeds 1..5): R from 0.21 (M = 1) to 0.013 (M = 16), 0.0055
(L = 4); c -0.095 [-0.248, 0.058] at M = 1; R jumped between rows by up to
x3.1, x7.8, x4.7, x7.6, x4.1 (M = 1..16), x95 (L = 2), x17.6 (L = 4); test
accuracy 0.816 (M = 1) to 0.941 (M = 8, L = 4, chosen); logistic
regression 0.9471, nearest centroid 0.8914. Pilots of this design (seed 1,
dtau = 0.025 unless said; "share": of images with a margin of log 9;
"step": the cross-entropy's, 5 blocks' lower bound [the largest block's
upper bound]; "ratio": the largest of R to the row before): M = 16: share
0.93, 0.97, 0.984 at tau = 50, 70, 100, step 0.070 [0.21] at 50, ratio
1.01; M = 8: share 0.947, 0.964 at 70, 90, step 0.0058 [0.017] and
0.0028 [0.0060] at 50, 90, ratio 1.32; M = 4: share 0.94 at 90, step 0.0011 [0.0015] at 50, ratio 4.7;
M = 2: ratio 5.0; M = 1 (seed 2): R(0) = 9.3, step 6.7e-4 at 0, 0.0067
[0.013] at 50, 0.0042 [0.0093] at 100; R 0.153, 0.105 at tau = 100, 140
(training accuracy 0.964, 0.977; share 0.79 at 100), a jump x22 at 150; at
dtau = 0.004 (seed 3) R rose in 59 of its first 250 rows, at most x1.33. L = 2: share 0.99 at
60-70; step 0.026 [0.040], 0.011, 0.0075, 0.0073 at 10, 20, 40, 70; a jump
x19 at 75; at dtau = 0.006 two rises in 280 rows to tau = 34. L = 4: share
0.99 at 40, 1.0 from 60; step 0.075 [0.33] at 30; ratio 1.06. The squared
loss's step there: 1.7e-6 to 7.6e-4; at initialisation on all 1,150
images (M = 8, L = 1) 0.0346 (1 GiB, minutes; 5 blocks' bound 0.0341).
This design's first form (seeds 6..10, dtau = 0.0125, to tau = 150; its
forward passes not run): M = 1: R at the last row 0.235, 0.177, 0.230,
0.182, 0.284, c -0.157, -0.385, +0.091, -0.181, -0.416, training accuracy
0.912-0.947; M = 2: R 0.021, 0.059, 0.051, 0.044, 0.081, c -0.28, -0.30,
-0.28, -0.45, -0.27, training accuracy 0.984-0.997.

  python3 scripts/experiments/width_depth.py [--quick] [--update-docs] [--jobs J]

Local only (`mft ntk`; the chosen size's further seeds follow the runs
before them). CPU seconds a step (the earlier timings): 0.028, 0.03,
0.035, 0.044, 0.057 (M = 1..16, L = 1), 0.058, 0.12 (L = 2, 4). A seed:
12,000 steps of M = 1, 2, 4 (1,116 s), 6,000 of M = 8, 16 (606 s), 4,800
of L = 2 (278 s), 2,400 of L = 4 (288 s); 5 and 6 seeds and the chosen's
1-2 more: 12,900 CPU s, about 1 h 55 min on 2 cores with the 7 kernels and
the forward passes (the first form ran a pair of M = 1, 2 runs every 5.5
minutes). Writes width_depth.csv (per sweep and size: seeds, diverged,
dtau, tau, the runs with a catapult, the first seed's two linearised
steps, the largest ratio of R between rows, R at tau = 60 with its
interval, R at the end, c with its interval, the share separated, the
endings, the accuracies, the chosen size, the runs' mft version and
creation), width_depth-criteria.txt
and exp_width_depth.png.
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
import width_depth_steps
from common import Run

# Seeds 1..5 were the earlier design's: its results are this one's pilot.
# Seeds 6..11 were this design's first form (the step halved on a jump),
# stopped after M = 1, 2 (the docstring's Steps). Every model trains
# seeds 12..16, the depth sweep's (M = 8) also 17, and
# the size chosen on validation further seeds up to chosen_seeds (the plans
# of criteria 6-8). schedule: (M, L): (dtau, tau at the end).
FULL = dict(widths=[1, 2, 4, 8, 16], fixed_L=1, depths=[1, 2, 4], fixed_M=8, seeds=[12, 13, 14, 15, 16],
            depth_seeds=[12, 13, 14, 15, 16, 17], chosen_seeds=7, compare_tau=60.0,
            schedule={(1, 1): (0.0125, 150), (2, 1): (0.0125, 150), (4, 1): (0.0125, 150), (8, 1): (0.025, 150),
                      (16, 1): (0.025, 150), (8, 2): (0.0125, 60), (8, 4): (0.025, 60)},
            rows=200, blocks=6, train=None, test=None)
QUICK = dict(widths=[1, 2], fixed_L=1, depths=[1, 2], fixed_M=2, seeds=[1, 2], depth_seeds=[1, 2, 3], chosen_seeds=4,
             compare_tau=0.5, schedule={(1, 1): (0.025, 1.0), (2, 1): (0.025, 1.0), (2, 2): (0.025, 0.5)},
             rows=10, blocks=2, train=64, test=32)
JUMP = 2.0     # a catapult: R at least doubles between two history rows (the flow never raises R)
END_SPIKE = 2.0  # sanity a: a run's last R within this factor of the lowest R of its last fifth
VALIDATION = 0.2   # share of the training split that chooses the size
SPLIT_SEED = 0
REPRODUCED = 1e-9  # sanity b: the end's forward against the run's last R (relative)
REACHED = common.ENDINGS[4:]  # interpolated, separated: the ends the theory speaks of
READOUT = {"readout.kind": "mean", "readout.dim": 10, "loss.kind": "cross-entropy"}
# Power (stats.Plan): the earlier design's results (seeds 1..5, tau = 100,
# docs/experiments/width_depth.csv and -criteria.txt at 75cf623): value and
# 95 % interval over its 5 seeds, and the baselines (the same images).
EARLIER = dict(seeds=5, width_slope=(-1.04, -1.34, -0.741), depth_slope=(-0.866, -1.75, 0.0202),
               test_acc=(0.940947, 0.93306, 0.948834), centroid=0.8914, logistic=0.9471)
COLUMNS = ["sweep", "M", "L", "seeds", "diverged", "dtau", "tau", "catapults", "stable_dtau", "squared_dtau",
           "largest_jump", "risk", "risk_low", "risk_high", "end_risk", "change", "change_low", "change_high",
           "separated_share", "ending", "train_acc", "validation", "test_acc", "test_acc_low", "test_acc_high",
           "chosen"]

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


def split_files(options, size, folder):
    """The training file (trained-on images, the validation images as its
    held-out set), the test file, the training images cut into `blocks`
    files (image i in block i mod blocks: the kernel's blocks), and the
    pixel arrays of the three sets."""
    import h5py
    with h5py.File(digits_file(options, size["train"], size["test"]), "r") as f:
        tokens, targets = f["data/tokens"][()], f["data/targets"][()]
        test = (f["data/test_tokens"][()], f["data/test_targets"][()])
    choose, fit = stats.validation_split(len(targets), VALIDATION, SPLIT_SEED)
    training = common.content_file(folder, "digits-fit", {
        "data/tokens": tokens[fit], "data/targets": targets[fit],
        "data/test_tokens": tokens[choose], "data/test_targets": targets[choose]})
    B = size["blocks"]
    blocks = [common.data_file(folder, f"digits-fit-block{b}of{B}", tokens[fit][b::B], targets[fit][b::B])
              for b in range(B)]
    pixels = lambda t: t[:, :, :16].reshape(len(t), -1)  # the 64 pixels, without the positions
    arrays = {"fit": (pixels(tokens[fit]), targets[fit]), "validation": (pixels(tokens[choose]), targets[choose]),
              "test": (pixels(test[0]), test[1])}
    return training, common.data_file(folder, "digits-test", *test), blocks, arrays


def sizes(size):
    """(sweep, M, L) of every model: the width sweep, then the depth sweep
    (M = fixed_M, L = fixed_L is in both)."""
    return [("width", M, size["fixed_L"]) for M in size["widths"]] + \
           [("depth", size["fixed_M"], L) for L in size["depths"]]


def smallest(size):
    return size["widths"][0], size["fixed_L"]


def schedule(size, M, L):
    """(dtau, steps, tau at the end) of model (M, L)."""
    dtau, tau = size["schedule"][M, L]
    return dtau, int(round(tau / dtau)), float(tau)


def model_seeds(size, M, L):
    return size["depth_seeds"] if M == size["fixed_M"] else size["seeds"]


def train_run(size, training, M, L, seed):
    dtau, steps, _ = schedule(size, M, L)
    return Run(run_name(M, L, seed), {
        "data.task": "file", "data.file": training, **READOUT, "model.heads": M, "model.slices": L, "init.seed": seed,
        "train.steps": steps, "train.dtau": dtau, "output.history_every": steps // size["rows"],
        "output.snapshot_every": steps})


def run_name(M, L, seed):
    return f"M{M}-L{L}-s{seed}"


def fitted_at(history, tau):
    """R at tau on the line fitted to log R over [0.8 tau, tau] (at a run's
    end: its last fifth, common.change's window): a single row can sit on an
    oscillation."""
    t, risk = np.asarray(history["tau"], float), np.asarray(history["risk"], float)
    keep = (t >= 0.8 * tau - 1e-9) & (t <= tau + 1e-9)
    if keep.sum() < 2 or np.any(risk[keep] <= 0):
        return float(risk[np.searchsorted(t, tau - 1e-9)])
    slope, intercept = np.polyfit(t[keep], np.log(risk[keep]), 1)
    return float(np.exp(intercept + slope * tau))


def measured(run, paths, size, stable=None):
    """What run `run` (a Run of train_run) measured; `stable`: its stable
    steps and their file (stable_steps), for the first seed of a model."""
    import h5py
    h, _ = common.history(paths[run.name])
    with h5py.File(paths[f"{run.name}-fit"], "r") as f:
        logits, labels = f["forward/predictions"][()], f["data/targets"][()]
        forward_risk = float(f["forward"].attrs["risk"])
    with h5py.File(paths[f"{run.name}-test"], "r") as f:
        test = f["forward/predictions"][()], f["data/targets"][()]
    risk = np.asarray(h["risk"], float)
    (squared, curvature), kept = stable or ((np.nan, np.nan), None)
    return {"risk": fitted_at(h, size["compare_tau"]), "end_risk": fitted_at(h, float(h["tau"][-1])),
            "change": common.change(h, common.last_fifth(h)),
            "ending": common.run_ending(h, logits=logits, labels=labels),
            "share": common.margin_fraction(logits, labels), "jump": float(np.max(risk[1:] / risk[:-1])),
            "end_spike": float(risk[-1] / np.min(risk[np.asarray(h["tau"], float) >= common.last_fifth(h)])),
            "reproduced": abs(forward_risk - risk[-1]) / risk[-1], "dtau": run.args["train.dtau"],
            "stable": curvature, "squared": squared, "train_acc": float(h["accuracy"][-1]),
            "validation": float(h["test_accuracy"][-1]),
            "test_acc": float(np.mean(np.argmax(test[0], 1) == np.argmax(test[1], 1))),
            "per_step": (h["wall_time"][-1] - h["wall_time"][0]) / max(1, h["step"][-1] - h["step"][0]),
            "curve": (np.asarray(h["tau"], float), risk),
            "runs": [paths[run.name], paths[f"{run.name}-fit"], paths[f"{run.name}-test"]] + ([kept] if kept else [])}


def train_and_measure(runs, size, files, options, kernel_seeds=()):
    """Trains `runs` (of train_run), then runs their forward passes (always
    rerun: cheap, and never from an older run's particles; the test images,
    and the training images for the ending's logits) and, for the seeds in
    kernel_seeds, the kernel at the end; {(M, L): {seed: measured}} of the
    runs that did not diverge."""
    import h5py
    training, test_file, blocks, folder = files
    paths = common.execute("width_depth", runs, options)
    fresh = copy.copy(options)
    fresh.fresh = True
    trained = [r for r in runs if r.name in paths]
    paths.update(common.execute("width_depth", [Run(f"{r.name}-test", {
        "data.task": "file", "data.file": test_file, "init.file": str(paths[r.name]), "init.snapshot": -1, **READOUT},
        command="forward") for r in trained] + [Run(f"{r.name}-fit", {"from": str(paths[r.name])}, command="forward")
                                                for r in trained], fresh))
    per = {}
    for r in trained:
        M, L, seed = r.args["model.heads"], r.args["model.slices"], r.args["init.seed"]
        stable = None
        if seed in kernel_seeds:
            with h5py.File(paths[f"{r.name}-fit"], "r") as f:
                stable = width_depth_steps.stable_steps(
                    r.name, paths[r.name], np.asarray(f["forward/predictions"][()], float), blocks, READOUT,
                    options, folder)
        per.setdefault((M, L), {})[seed] = measured(r, paths, size, stable)
    return per


def log_interval(got, key="risk"):
    return interval([np.log(v[key]) for v in got.values() if v[key] > 0])


def table(per, size, chosen):
    rows = []
    for sweep, M, L in sizes(size):
        got = per[M, L]
        iv = {"risk": log_interval(got), "change": interval([v["change"] for v in got.values()]),
              "test_acc": interval([v["test_acc"] for v in got.values()])}
        seeds = max(len(model_seeds(size, M, L)), size["chosen_seeds"] if (M, L) == chosen else 0)
        dtau, _, tau = schedule(size, M, L)
        mean = lambda key: np.mean([v[key] for v in got.values()]) if got else np.nan
        row = {"sweep": sweep, "M": M, "L": L, "seeds": seeds, "diverged": seeds - len(got), "dtau": dtau, "tau": tau,
               "catapults": sum(v["jump"] >= JUMP for v in got.values()),
               "ending": common.endings_text([v["ending"] for v in got.values()]),
               "chosen": "yes" if (M, L) == chosen else "", "runs": [p for v in got.values() for p in v["runs"]],
               "train_acc": mean("train_acc"), "validation": mean("validation"), "separated_share": mean("share"),
               "stable_dtau": np.nanmin([v["stable"] for v in got.values()] + [np.inf]),
               "squared_dtau": np.nanmin([v["squared"] for v in got.values()] + [np.inf]),
               "end_risk": np.exp(np.mean([np.log(v["end_risk"]) for v in got.values()])) if got else np.nan,
               "largest_jump": max((v["jump"] for v in got.values()), default=np.nan)}
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


def spread(low, high, seeds):
    """The seeds' standard deviation behind a 95 % t-interval [low, high]
    over `seeds` seeds (a pilot's)."""
    return (high - low) / 2 * np.sqrt(seeds) / stats.t_quantile(stats.LEVEL, seeds - 1)


def plans(size):
    """The plan lines of the bound criteria (stats.Plan) from the earlier
    design's spreads: a bound's band is the distance of the pilot's mean from
    the bound, on whichever side (a verdict the design resolves either way)."""
    e = EARLIER
    plan = lambda text, band, key, n: stats.Plan(text, band, spread(*e[key][1:], e["seeds"]), e["seeds"], n).line()
    return [plan("criterion 5: the width slope below 0", abs(e["width_slope"][0]), "width_slope", len(size["seeds"])),
            plan("criterion 6: the depth slope below 0", abs(e["depth_slope"][0]), "depth_slope",
                 len(size["depth_seeds"])),
            plan("criterion 7: the chosen size's test accuracy above nearest centroid's",
                 abs(e["test_acc"][0] - e["centroid"]), "test_acc", size["chosen_seeds"]),
            plan("criterion 8: the chosen size's test accuracy above logistic regression's",
                 abs(e["test_acc"][0] - e["logistic"]), "test_acc", size["chosen_seeds"])]


def reached(got):
    return [v["ending"] in REACHED for v in got.values()]


def threshold(per, models):
    """k such that every seed of models[k:] reached its end and no seed of
    models[:k] did, or None when the endings do not split by size so."""
    got = [reached(per[m]) for m in models]
    for k in range(len(models) + 1):
        if all(g and all(g) for g in got[k:]) and not any(any(g) for g in got[:k]):
            return k
    return None


def endings(got):
    return (f"{common.endings_text([v['ending'] for v in got.values()])}; share of training images with a margin >= "
            f"log 9 per seed " + ", ".join(f"{v['share']:.4f}" for v in got.values()))


def sanity_checks(per):
    runs = [v for got in per.values() for v in got.values()]
    steps = "; ".join(f"M = {M}, L = {L}: dtau {v['dtau']:g}, the cross-entropy's {v['stable']:.3g}, the squared "
                      f"loss's {v['squared']:.3g}" for (M, L), got in per.items() for v in got.values()
                      if np.isfinite(v["stable"]))
    return [common.sanity(
        f"no run ends inside a catapult: each run's last R lies within a factor {END_SPIKE:g} of the lowest R of its "
        "last fifth", bool(runs) and all(v["end_spike"] < END_SPIKE for v in runs),
        "largest last R over the last fifth's lowest: " + ", ".join(
            f"M = {M}, L = {L} {max(v['end_spike'] for v in got.values()):.3g}" for (M, L), got in per.items() if got) +
        f"; runs with a catapult (R x{JUMP:g} or more between two rows) and the largest ratio of R to the row "
        "before, per model: " + ", ".join(
            f"M = {M}, L = {L} {sum(v['jump'] >= JUMP for v in got.values())} of {len(got)}, "
            f"x{max(v['jump'] for v in got.values()):.3g}" for (M, L), got in per.items() if got) +
        f"; the linearised stable steps at the end of each model's first seed (2 N / lambda_max, blocks' lower "
        f"bound): {steps}"),
        common.sanity(
        f"the end's logits are the run's: each training forward's R equals the run's last R within {REPRODUCED:g} "
        "(relative)", bool(runs) and all(v["reproduced"] <= REPRODUCED for v in runs),
        f"largest relative difference {max(v['reproduced'] for v in runs):.2g} over {len(runs)} runs")]


def criteria(per, size, chosen, base):
    lines = plans(size) + sanity_checks(per)
    stall, (M1, L1) = per[smallest(size)], smallest(size)
    _, _, tau1 = schedule(size, M1, L1)
    changes = ", ".join(f"{v['change']:+.3f}" for v in stall.values())
    lines.append(common.criterion(
        f"the smallest model (M = {M1}, L = {L1}) stalls by tau = {tau1:g}: every seed ends on a plateau (reaches "
        f"neither end, and R's fitted change over the last fifth lies within +-{common.PLATEAU:.0%})",
        len(stall) >= 2 and all(v["ending"] == common.ENDINGS[0] for v in stall.values()),
        f"change per seed {changes}; {endings(stall)}; R "
        f"at tau = {tau1:g} {fmt(log_interval(stall, 'end_risk'), 'log')}"))
    sweeps = {"width": ("M", [(M, size["fixed_L"]) for M in size["widths"]], size["widths"]),
              "depth": ("L", [(size["fixed_M"], L) for L in size["depths"]], size["depths"])}
    for sweep, (var, models, x) in sweeps.items():
        got = per[models[-1]]
        lines.append(common.criterion(
            f"{sweep}: the largest ({var} = {x[-1]}) falls towards 0: every seed separates (at least "
            f"{common.SEPARATED_FRACTION:.0%} of the training images with a logit margin of log 9) or interpolates "
            f"by tau = {schedule(size, *models[-1])[2]:g}", len(got) >= 2 and all(reached(got)),
            f"{endings(got)}; R at the end {fmt(log_interval(got, 'end_risk'), 'log')}"))
    var, models, x = sweeps["width"]
    k = threshold(per, models)
    lines.append(common.criterion(
        "width: a threshold: for some M* in the sweep above the smallest, every seed of every M >= M* reaches its "
        "end and no seed of a smaller M does", k is not None and 0 < k < len(models),
        (f"M* = {x[k]}" if k is not None and k < len(models) else "the endings do not split by M") + "; " +
        "; ".join(f"M = {M}: {common.endings_text([v['ending'] for v in per[M, L].values()])}" for M, L in models)))
    for sweep, (var, models, x) in sweeps.items():
        every = [s for s in size["seeds" if sweep == "width" else "depth_seeds"] if all(s in per[m] for m in models)]
        text = (f"{sweep}: R falls with {var} (each seed's log-log slope of its R at tau = {size['compare_tau']:g} "
                f"against {var}, interval below 0)")
        if len(every) < 2:
            lines.append(common.criterion(text, False, "fewer than two seeds with every run"))
            continue
        slope = stats.per_seed_slopes(x, [[per[m][s]["risk"] for m in models] for s in every])["slope"]
        lines.append(common.criterion(text, slope.below(0.0), f"slope {slope.text()}; {len(every)} seeds"))
    acc = interval([v["test_acc"] for v in per[chosen].values()])
    scores = "validation accuracy, mean over seeds: " + ", ".join(
        f"M = {M}, L = {L} {np.mean([got[s]['validation'] for s in model_seeds(size, M, L) if s in got]):.4g}"
        for (M, L), got in per.items() if got)
    for label, key in (("nearest centroid", "centroid"), ("logistic regression", "logistic")):
        lines.append(common.criterion(
            f"the size chosen on validation beats {label} on the test images (its accuracy's interval over "
            f"{size['chosen_seeds']} seeds above {label}'s)", acc is not None and acc.above(base["test"][key]),
            f"chosen M = {chosen[0]}, L = {chosen[1]}: {fmt(acc)} vs {base['test'][key]:.4f}; {scores}"))
    return lines


def pixel_baselines(arrays):
    fit = arrays["fit"]
    return {part: {"logistic": baselines.logistic_regression_accuracy(*fit, *arrays[part]),
                   "centroid": baselines.nearest_centroid_accuracy(*fit, *arrays[part])}
            for part in ("validation", "test")}


def main():
    import width_depth_figure  # imports this driver: here, not at the top, so that importing it stays acyclic
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "width_depth", "`mft ntk`, and further seeds that follow the runs before them")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("width_depth-quick" if options.quick else "width_depth")
    training, test_file, blocks, arrays = split_files(options, size, folder)
    files = (training, test_file, blocks, folder)
    models = list(dict.fromkeys((M, L) for _, M, L in sizes(size)))
    if not options.quick:
        print("[width_depth] 38 runs and their forward passes, the kernels at the end of each model's first seed, "
              "then the chosen size's further seeds: about 1 h 55 min on 2 cores", flush=True)
    runs = [train_run(size, training, M, L, s) for M, L in models for s in model_seeds(size, M, L)]
    got = train_and_measure(runs, size, files, options, kernel_seeds=[size["seeds"][0]])
    per = {m: got.get(m, {}) for m in models}
    chosen = stats.best_on_validation({m: 1 - np.mean([v["validation"] for v in per[m].values()])
                                       for m in models if per[m]})
    # The chosen size's test accuracy is judged over chosen_seeds seeds (the
    # plan of criteria 7, 8): the further seeds follow the choice.
    further = list(range(max(size["depth_seeds"]) + 1, 100))[:size["chosen_seeds"] - len(model_seeds(size, *chosen))]
    for got in train_and_measure([train_run(size, training, *chosen, s) for s in further], size,
                                 files, options).values():
        per[chosen].update(got)
    base = pixel_baselines(arrays)
    rows = table(per, size, chosen)
    common.write_csv("width_depth", options, COLUMNS, rows)
    for r in rows:
        print(f"{r['sweep']} M = {r['M']}, L = {r['L']}, dtau {r['dtau']:g}: R at tau = {size['compare_tau']:g} "
              f"{r['risk']:.4g}, at its end {r['end_risk']:.4g}; {r['ending']}; test {r['test_acc']:.3f}"
              f"{' (chosen)' if r['chosen'] else ''}; {r['catapults']} runs with a catapult, the largest "
              f"x{r['largest_jump']:.3g}")
    for part, b in base.items():
        print(f"baselines on the {part} images: logistic regression {b['logistic']:.4f}, nearest centroid "
              f"{b['centroid']:.4f}")
    timing = {m: np.mean([v["per_step"] for v in per[m].values()]) for m in models if per[m]}
    print("seconds a step: " + ", ".join(f"M = {M}, L = {L} {t:.3g}" for (M, L), t in timing.items()))
    common.write_criteria("width_depth", options, criteria(per, size, chosen, base))
    width_depth_figure.plot(per, size, base, chosen, options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

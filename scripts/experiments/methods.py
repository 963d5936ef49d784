#!/usr/bin/env python3
"""Training methods, to a plateau: where do the gradient flow the theory
analyses, minibatch SGD (b = N/4, N/16), Adam and mean-field Langevin
(T = 1e-4, 1e-3) end, and does any of them generalise better than the flow?

Setting: M = 16, L = 4, seeds 1..5. In-context linear regression (icl): 256
training sequences, each seed its own (data.seed = seed + 10), one held-out
set of 512 for every run; the digits: the first 256 training images and the
whole test split (359). The flow, SGD and Adam run from the drawn particles
for 1500 steps (dtau = 0.1, tau = 150; Adam dtau = 0.01). The runs of one
seed share its particles and data: methods are compared paired by seed.

Where a run ends (a rule on its training history): the line fitted to log R
against tau over the last fifth of the run gives R's relative change over
that fifth, c = exp(slope span) - 1: "plateau" when |c| < 5 %, else "still
falling" (c <= -5 %) or "rising". A run still falling has not ended: its
last R is an upper bound on where it would end, and is reported as such.

Langevin, at a step where equipartition can hold. Near a minimum where the
model fits the data the stationary risk is T N d_out / (2 M L) (section 13);
Euler-Maruyama's chain exceeds it by 1/(1 - dtau kappa/2) along a mode of
kappa = lambda(K_all)/N, and at dtau = 0.1 the flow ends near its stability
edge (dtau kappa_max -> 2), where that factor is large. So Langevin starts
from each seed's flow at its end (a minimum), at one step for all seeds,
dtau_L = 0.1 / kappa_max rounded down to two digits (kappa_max: the largest
lambda_max(K_all)/N of the flows' ends, `mft ntk`), and runs to tau = 8;
R* is the mean of R over tau in [4, 8], its window, and its ending is R's
relative change over the window, the mean over its second half over the
mean over its first, minus 1 (less noisy than a fitted line; threshold
15 %: its noise, near 6 % a run, is too large for 5 %). The quadratic
model's factor for this step and window (the mean over the modes of the
fraction filled from the minimum over 1/(1 - dtau_L kappa_i/2)) is printed
per seed; the criteria judge the measured ratio. The digits (cross-entropy)
have no quadratic minimum and no prediction: no Langevin there.

Chosen on one half, judged on the other: each held-out set is split once
(stats.validation_split, seed 0) into a validation and a judging half, both
predicted by every run's particles at its end (`mft forward`). The method
with the best mean over seeds on the validation half (icl: held-out risk
over the zero predictor's; digits: error rate) is compared with the flow on
the judging half, paired by seed.

Criteria, stated before the runs (95 % Student-t intervals over the seeds,
4 dof with five):
  1. icl: every flow, SGD and Adam run ends on a plateau (|c| < 5 %);
  2. digits: the same;
  3. icl: Langevin ends on a plateau: at each T the per-seed relative change
     of R over its window (second half against first) has an interval
     inside +-15 %;
  4. icl: equipartition at T = 1e-4: R* / (T N d_out / (2 M L)) has an
     interval inside [1/1.15, 1.15];
  5. icl: R* is linear in T: the per-seed power log(R*(1e-3) / R*(1e-4)) /
     log 10, paired by seed, has an interval inside [0.9, 1.1];
  6. icl: the method best on the validation half beats the flow on the
     judging half: the paired difference (the flow's ratio minus its) has
     an interval above 0;
  7. digits: the same on accuracy (its accuracy minus the flow's).
Each can fail: 1-2 if a run's R still falls (an exponential fall toward
R = 0 never plateaus) or rises; 3 if R* drifts or the seeds scatter; 4-5 if
the step, the window or R's curvature bias R*, or the seeds scatter (the
earlier design's ratios 1.5 and 2.7 at dtau = 0.1, power 1.25, fail both);
6-7 if the best on validation is the flow, or no better on the judging half.

What was seen before these were stated: the earlier design's results (three
seeds sharing one icl training set, Langevin from the drawn particles at
dtau = 0.1; 33 of 36 runs "below 0.01"): icl final R 6e-10 (flow) to 9e-7
(Adam), Langevin R* 3.0e-4 and 5.4e-3, 1.5 and 2.7 times T N/(2ML); icl
held-out ratios 0.90 (SGD b = 16) to 1.04 (flow), 1.13 and 1.27 (Langevin);
digits accuracy 0.880 (Adam) to 0.921 (SGD b = 16) on 256 images. Three
short full-size runs (icl, seed 1, data.seed 11), for the design and the
cost: the flow for 300 steps, R 0.45 -> 1.1e-2 at tau = 10 -> 2.7e-4 at
tau = 30, falling 14 % per unit of tau at the end; its lambda(K_all)/N from
0.015..1.72 (mean 0.20) at the drawn particles to 0.051..19.0 (mean 1.95)
at tau = 30, where Euler-Maruyama's factor averaged over the modes is 1.24
at dtau = 0.1 and 1.005 at 0.005. The quadratic model with that spectrum,
simulated (2000 runs of Euler-Maruyama at dtau = 0.005 from the minimum,
tau = 8): R* over [4, 8] 0.987 of the prediction, 4.2 % a run (a half-width
0.05 over five seeds, inside [1/1.15, 1.15] in 99 % of five-seed draws); the
window's halves differ by +1.0 +- 6.4 % a run (inside +-15 % in 92 % of
draws, while a line fitted over the window scatters by 12 %, inside +-15 %
in 34 %). Langevin from that flow at T = 1e-3, dtau = 0.005, 400 steps:
R / (T N/(2ML)) 0.14 -> 1.15 at tau = 2 (0.14 of it the flow's residual,
still decaying). 100 steps each of the flow, Adam and SGD b = 16: 0.12,
0.13, 0.018 s a step, Langevin 0.11 (the 2 cores shared with another
sweep).

  python3 scripts/experiments/methods.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

(--slurm submits the runs from the drawn particles; the kernels, Langevin
runs and forward passes follow locally with --from-sweep.) 40 runs of 1500
steps and 10 Langevin runs of about 1600: at the rates above about 55
minutes on 2 cores, at the earlier full run's (0.26 s a step for the icl
flow) about 110. Writes methods.csv (per task and method: the step; the
geometric mean over seeds of the final R, for Langevin R*, with its
interval; R's relative change over the last fifth with its interval and the
runs' endings; Langevin's ratio to equipartition; the validation and
judging halves' measures; the paired difference to the flow, positive when
better; the method chosen), methods_timing.csv (seconds per step: wall
time, which no rerun reproduces), methods-criteria.txt and exp_methods.png
(the training curves and what each criterion tests, with its intervals).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import copy
import math
from pathlib import Path

import numpy as np

import baselines
import common
import stats
from common import Run
from width_depth import digits_file

FULL = dict(seeds=[1, 2, 3, 4, 5], M=16, L=4, icl_sequences=256, held_out=512, digits_train=256, digits_test=359,
            steps=1500, every=25, dtau=0.1, adam_dtau=0.01, batches=(4, 16), temperatures=(1e-4, 1e-3),
            langevin_tau=8.0, burn=4.0, langevin_rows=200)
QUICK = dict(seeds=[1, 2], M=4, L=2, icl_sequences=16, held_out=16, digits_train=32, digits_test=32, steps=20,
             every=2, dtau=0.05, adam_dtau=0.01, batches=(2, 4), temperatures=(1e-4, 1e-3), langevin_tau=0.4,
             burn=0.2, langevin_rows=20)
TASKS = ("icl", "digits")
READOUT = {"icl": {}, "digits": {"readout.kind": "mean", "readout.dim": 10, "loss.kind": "cross-entropy"}}
DATA_SEED = 10     # icl: data.seed = seed + DATA_SEED, each seed its own training set
SPLIT_SEED = 0     # stats.validation_split of the held-out sets
NOISY = 0.15       # criterion 3: |c| over a Langevin run's window
STIFF = 0.1        # dtau_L kappa_max
BAND = 1.15        # criterion 4: R* / (T N d_out / (2 M L)) inside [1/BAND, BAND]
POWER = 0.1        # criterion 5: the power inside [1 - POWER, 1 + POWER]
COLUMNS = ["task", "method", "dtau", "seeds", "diverged", "risk", "risk_low", "risk_high", "change", "change_low",
           "change_high", "ending", "equipartition", "equipartition_low", "equipartition_high", "validation",
           "held_out", "held_out_low", "held_out_high", "to_flow", "to_flow_low", "to_flow_high", "chosen"]


# The t-interval over seeds of the finite values (None below two).
interval = stats.finite_interval


def trained(size, N):
    """(label, mft keys) of the methods run from the drawn particles; SGD's
    batches are N / divisor."""
    out = [("flow", {"train.method": "flow", "train.dtau": size["dtau"]})]
    for divisor in size["batches"]:
        out.append((f"sgd b={N // divisor}", {"train.method": "sgd", "train.batch": N // divisor,
                                              "train.dtau": size["dtau"]}))
    return out + [("adam", {"train.method": "adam", "train.dtau": size["adam_dtau"]})]


def langevin(T):
    return f"Langevin T={T:g}"


def task_args(task, size, options, seed):
    if task == "icl":
        return {"data.task": "icl-linear", "data.sequences": size["icl_sequences"], "data.seed": seed + DATA_SEED,
                "data.test_sequences": size["held_out"], "init.sigma_v": 0.5}
    return {"data.task": "file", "data.file": digits_file(options, size["digits_train"], size["digits_test"]),
            **READOUT["digits"]}


def run_name(task, label, seed):
    return f"{task}-{label.replace(' ', '-').replace('=', '')}-s{seed}"


def window_change(history, start):
    """R's relative change over tau >= start: the mean over the second half
    of those rows over the mean over the first, minus 1."""
    risk = np.asarray(history["risk"], float)[np.asarray(history["tau"], float) >= start - 1e-12]
    if len(risk) < 2:
        return np.nan
    return float(risk[len(risk) // 2:].mean() / risk[:len(risk) // 2].mean() - 1)


def round_down(x):
    """x rounded down to two significant digits."""
    unit = 10.0 ** (math.floor(math.log10(x)) - 1)
    return float(f"{math.floor(x / unit + 1e-9) * unit:.2g}")


def model_factor(kappa, dtau, first, last):
    """The quadratic model's R* / (T N d_out / (2 M L)) for Euler-Maruyama at
    dtau from the minimum, averaged over steps first..last: the mean over the
    modes of (1 - (1 - dtau kappa)^(2k)) / (1 - dtau kappa / 2); a flat
    mode (kappa <= 0, rounding) adds nothing to R."""
    kappa = np.clip(np.asarray(kappa, float), 0.0, None)
    q = 1 - dtau * kappa[:, None]
    if np.any(np.abs(q) >= 1):
        return np.inf
    return float(np.mean(np.mean(1 - q ** (2 * np.arange(first, last + 1)), axis=1) / (1 - dtau * kappa / 2)))


def fmt(iv):
    return iv.text() if iv is not None else "fewer than two seeds"


def measure(task, predictions, targets, index):
    """icl: held-out risk over the zero predictor's; digits: accuracy."""
    p, y = predictions[index], targets[index]
    if task == "icl":
        return baselines.squared_risk(p, y) / baselines.zero_risk(y)
    return float(np.mean(np.argmax(p, axis=1) == np.argmax(y, axis=1)))


def better(task, method, flow):
    """How much better `method` is than the flow: positive when it is."""
    return flow - method if task == "icl" else method - flow


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    import h5py
    seeds, temperatures = size["seeds"], size["temperatures"]
    listed, runs = {}, []
    for task in TASKS:
        listed[task] = trained(size, size["icl_sequences"] if task == "icl" else size["digits_train"])
        runs += [Run(run_name(task, label, s), {
            **task_args(task, size, options, s), **keys, "model.heads": size["M"], "model.slices": size["L"],
            "init.seed": s, "train.steps": size["steps"], "output.history_every": size["every"],
            "output.snapshot_every": size["steps"]}) for label, keys in listed[task] for s in seeds]
    if not options.from_sweep and not options.slurm:
        print(f"[methods] {len(runs)} runs of {size['steps']} steps, then the kernels, "
              f"{len(seeds) * len(temperatures)} Langevin runs and the forward passes; the full mode takes about "
              "55 minutes on 2 cores", flush=True)
    paths = common.execute("methods", runs, options)
    local = copy.copy(options)
    local.from_sweep, local.slurm = None, False

    # The flows' kernels at their ends set Langevin's step.
    flows = {s: run_name("icl", "flow", s) for s in seeds if run_name("icl", "flow", s) in paths}
    paths.update(common.execute("methods", [Run(f"{flows[s]}-ntk", {"from": str(paths[flows[s]]), "snapshot": -1,
                                                                    "ntk.part": "all"}, command="ntk")
                                            for s in flows], local))
    kappa = {}
    for s in flows:
        with h5py.File(paths[f"{flows[s]}-ntk"], "r") as f:
            kappa[s] = np.asarray(f["ntk/eigenvalues"][()], float) / size["icl_sequences"]
    top = max((k.max() for k in kappa.values()), default=np.nan)
    dtau_l = round_down(min(size["dtau"], STIFF / top)) if np.isfinite(top) else size["dtau"]
    steps_l = max(10, int(round(size["langevin_tau"] / dtau_l)))
    print(f"[methods] Langevin: dtau_L = {dtau_l:g} (largest lambda_max(K_all)/N at the flows' ends {top:.4g}; "
          f"dtau_L kappa_max {dtau_l * top:.3f}), {steps_l} steps", flush=True)
    names = {(task, label, s): run_name(task, label, s) for task in TASKS for label, _ in listed[task] for s in seeds}
    names.update({("icl", langevin(T), s): f"{run_name('icl', langevin(T), s)}-x{dtau_l:g}" for T in temperatures
                  for s in seeds})
    paths.update(common.execute("methods", [Run(names["icl", langevin(T), s], {
        **task_args("icl", size, options, s), "data.test_sequences": 0, "model.heads": size["M"],
        "model.slices": size["L"], "init.seed": s, "init.file": str(paths[flows[s]]), "train.method": "flow",
        "train.temperature": T, "train.dtau": dtau_l, "train.steps": steps_l,
        "output.history_every": max(1, steps_l // size["langevin_rows"]), "output.snapshot_every": steps_l})
        for T in temperatures for s in flows], local))
    listed["icl"] += [(langevin(T), None) for T in temperatures]

    # Every run's particles at its end on the held-out set (always rerun:
    # cheap, and never from an older run's particles).
    first = next(r.name for r in runs if r.name.startswith("icl-") and r.name in paths)
    run = common.mft_io.open_run(str(paths[first]))
    held = {"icl": (run.test_tokens, run.test_targets)}  # one held-out set for every icl run
    run.close()
    with h5py.File(digits_file(options, size["digits_train"], size["digits_test"]), "r") as f:
        held["digits"] = (f["data/test_tokens"][()], f["data/test_targets"][()])
        digits_train = (f["data/tokens"][()], f["data/targets"][()])
    folder = Path(options.runs) / ("methods-quick" if options.quick else "methods")
    files = {task: common.data_file(folder, f"{task}-held-out", *held[task]) for task in TASKS}
    fresh = copy.copy(local)
    fresh.fresh = True
    paths.update(common.execute("methods", [Run(f"{names[key]}-held-out", {
        "data.task": "file", "data.file": str(files[key[0]]), "init.file": str(paths[names[key]]), "init.snapshot": -1,
        **READOUT[key[0]]}, command="forward") for key in names if names[key] in paths], fresh))
    halves = {task: stats.validation_split(len(held[task][1]), 0.5, SPLIT_SEED) for task in TASKS}

    predicted = {T: T * size["icl_sequences"] / (2 * size["M"] * size["L"]) for T in temperatures}
    per = {}  # (task, label): {seed: what its run measured}
    for task in TASKS:
        for label, keys in listed[task]:
            per[task, label] = {}
            for s in (s for s in seeds if names[task, label, s] in paths):
                h, cfg = common.history(paths[names[task, label, s]])
                with h5py.File(paths[f"{names[task, label, s]}-held-out"], "r") as f:
                    predictions = np.asarray(f["forward/predictions"][()], float)
                targets = np.asarray(held[task][1], float).reshape(len(predictions), -1)
                tau, risk = np.asarray(h["tau"], float), np.asarray(h["risk"], float)
                start = size["burn"] if keys is None else common.last_fifth(h)
                end = float(np.mean(risk[tau >= start - 1e-12])) if keys is None else float(risk[-1])
                c = window_change(h, start) if keys is None else common.change(h, start)
                per[task, label][s] = {
                    "risk": end, "change": c, "ending": common.ending(c, common.PLATEAU if keys else NOISY),
                    "validation": measure(task, predictions, targets, halves[task][0]),
                    "judged": measure(task, predictions, targets, halves[task][1]), "dtau": float(cfg["train.dtau"]),
                    "ratio": end / predicted[float(cfg["train.temperature"])] if keys is None else np.nan,
                    "per_step": (h["wall_time"][-1] - h["wall_time"][0]) / max(1, h["step"][-1] - h["step"][0]),
                    "curve": (tau, risk)}
    burn = int(round(size["burn"] / dtau_l))
    factor = {s: model_factor(kappa[s], dtau_l, burn, steps_l) for s in kappa}
    rows, chosen = table(per, listed, size)
    common.write_csv("methods", options, COLUMNS, rows)
    common.write_csv("methods_timing", options, ["task", "method", "seconds_per_step"], rows)
    for r in rows:
        print(f"{r['task']:6} {r['method']:17} R {r['risk']:.3e} [{r['risk_low']:.3e}, {r['risk_high']:.3e}], "
              f"change {r['change']:+.3f}, {r['ending']}; judged {r['held_out']:.4f}, better than the flow by "
              f"{r['to_flow']:+.4f} [{r['to_flow_low']:+.4f}, {r['to_flow_high']:+.4f}]")
    pixels = lambda t: np.asarray(t)[:, :, :16].reshape(len(t), -1)  # the 64 pixels, without the positions
    judge = halves["digits"][1]
    args = (pixels(digits_train[0]), digits_train[1], pixels(held["digits"][0][judge]), held["digits"][1][judge])
    pixel = {"logistic": baselines.logistic_regression_accuracy(*args),
             "centroid": baselines.nearest_centroid_accuracy(*args)}
    print(f"baselines on the judging halves: icl zero predictor (ratio 1); digits logistic regression "
          f"{pixel['logistic']:.3f}, nearest centroid {pixel['centroid']:.3f}")
    for s in kappa:
        k = np.sort(kappa[s])
        print(f"measured: seed {s}: kappa at the flow's end {k[0]:.3g}..{k[-1]:.3g} (mean {k.mean():.3g}); "
              f"dtau_L kappa_max {dtau_l * k[-1]:.3f}; the quadratic model's R* / (T N/(2ML)) over the window "
              f"{factor[s]:.4f}; the flow's last R over the prediction at T = {temperatures[0]:g}: "
              f"{per['icl', 'flow'][s]['risk'] / predicted[temperatures[0]]:.2e}", flush=True)
    lines = criteria(per, listed, rows, size, chosen, dtau_l, top, factor)
    common.write_criteria("methods", options, lines)
    plot(per, listed, rows, size, predicted, factor, pixel, dtau_l, options)


def power(per, size):
    """The per-seed power of R* in T, paired by seed, and its interval."""
    cold, warm = (per["icl", langevin(T)] for T in (size["temperatures"][0], size["temperatures"][-1]))
    span = np.log(size["temperatures"][-1] / size["temperatures"][0])
    return interval([np.log(warm[s]["risk"] / cold[s]["risk"]) / span for s in cold if s in warm])


def table(per, listed, size):
    """The CSV's rows (with their intervals) and {task: the method chosen on
    the validation half}."""
    rows, chosen = [], {}
    for task in TASKS:
        score = (lambda v: v) if task == "icl" else (lambda v: 1 - v)  # lower is better: the ratio, the error rate
        chosen[task] = stats.best_on_validation({
            label: np.mean([score(v["validation"]) for v in per[task, label].values()])
            for label, _ in listed[task] if per[task, label]})
        flow = per[task, "flow"]
        for label, keys in listed[task]:
            got = per[task, label]
            logs = interval([np.log(v["risk"]) for v in got.values() if v["risk"] > 0])
            diff = interval([better(task, got[s]["judged"], flow[s]["judged"]) for s in got if s in flow]) \
                if label != "flow" else None
            iv = {"risk": logs, "change": interval([v["change"] for v in got.values()]),
                  "equipartition": interval([v["ratio"] for v in got.values()]) if keys is None else None,
                  "held_out": interval([v["judged"] for v in got.values()]), "to_flow": diff}
            row = {"task": task, "method": label, "dtau": next((v["dtau"] for v in got.values()), np.nan),
                   "seeds": len(size["seeds"]), "diverged": len(size["seeds"]) - len(got),
                   "ending": common.endings_text([v["ending"] for v in got.values()]),
                   "validation": np.mean([v["validation"] for v in got.values()]) if got else np.nan,
                   "chosen": "yes" if label == chosen[task] else "", "intervals": iv,
                   "seconds_per_step": np.mean([v["per_step"] for v in got.values()]) if got else np.nan}
            for key, i in iv.items():
                values = (i.value, i.low, i.high) if i else (np.nan,) * 3
                row[key], row[key + "_low"], row[key + "_high"] = np.exp(values) if key == "risk" else values
            rows.append(row)
    return rows, chosen


def criteria(per, listed, rows, size, chosen, dtau_l, top, factor):
    lines = []
    for task in TASKS:
        ends = {label: [v["ending"] for v in per[task, label].values()] for label, keys in listed[task] if keys}
        flat = sum(e.count(common.ENDINGS[0]) for e in ends.values())
        lines.append(common.criterion(
            f"{task}: every flow, SGD and Adam run ends on a plateau (R's fitted relative change over its last fifth "
            f"under {common.PLATEAU:.0%} in size)", flat == len(ends) * len(size["seeds"]),
            f"{flat} of {len(ends) * len(size['seeds'])} runs; " + "; ".join(
                f"{label}: {common.endings_text(e)}, "
                f"change {fmt(interval([v['change'] for v in per[task, label].values()]))}"
                for label, e in ends.items())))
    cold, warm = size["temperatures"][0], size["temperatures"][-1]
    hot = {T: per["icl", langevin(T)] for T in size["temperatures"]}
    drift = {T: interval([v["change"] for v in hot[T].values()]) for T in hot}
    lines.append(common.criterion(
        f"icl: Langevin ends on a plateau (at each T R's relative change over its window, tau in "
        f"[{size['burn']:g}, {size['langevin_tau']:g}], second half against first, has an interval inside "
        f"+-{NOISY:.0%})",
        all(d is not None and -NOISY < d.low and d.high < NOISY for d in drift.values()),
        "; ".join(f"T = {T:g}: {fmt(d)}" for T, d in drift.items())))
    ratio = {T: interval([v["ratio"] for v in hot[T].values()]) for T in hot}
    r = ratio[cold]
    lines.append(common.criterion(
        f"icl: equipartition at T = {cold:g}: R* / (T N d_out / (2 M L)) at dtau_L = {dtau_l:g} has an interval "
        f"inside [1/{BAND:g}, {BAND:g}]", r is not None and 1 / BAND < r.low and r.high < BAND,
        f"{fmt(r)}; at T = {warm:g} {fmt(ratio[warm])}; dtau_L kappa_max {dtau_l * top:.3f}; the quadratic model's "
        f"factor {np.mean(list(factor.values())) if factor else np.nan:.4f}"))
    p = power(per, size)
    lines.append(common.criterion(
        f"icl: R* linear in T: the power log(R*({warm:g}) / R*({cold:g})) / log({warm / cold:g}), paired by seed, "
        f"has an interval inside [{1 - POWER:g}, {1 + POWER:g}]",
        p is not None and 1 - POWER < p.low and p.high < 1 + POWER, fmt(p)))
    for task in TASKS:
        best, flow = chosen[task], per[task, "flow"]
        text = (f"{task}: the method best on the validation half beats the flow on the judging half ("
                + ("the flow's held-out ratio minus its" if task == "icl" else "its accuracy minus the flow's")
                + ", paired by seed, interval above 0)")
        scores = f"validation {'ratios' if task == 'icl' else 'accuracies'}, means over seeds: " + ", ".join(
            f"{r['method']} {r['validation']:.4g}" for r in rows if r["task"] == task)
        if best == "flow":
            lines.append(common.criterion(text, False, f"the flow is the best on the validation half; {scores}"))
            continue
        diff = interval([better(task, per[task, best][s]["judged"], flow[s]["judged"]) for s in per[task, best]
                         if s in flow])
        lines.append(common.criterion(text, diff is not None and diff.above(0.0),
                                      f"chosen {best}: {fmt(diff)}; {scores}"))
    return lines


def bar(ax, x, iv, **style):
    if iv is not None:
        ax.errorbar(x, iv.value, yerr=[[iv.value - iv.low], [iv.high - iv.value]], capsize=3, **style)


def plot(per, listed, rows, size, predicted, factor, pixel, dtau_l, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.4))
    level = f"{100 * stats.LEVEL:g} % t over {len(size['seeds'])} seeds"
    row = {(r["task"], r["method"]): r for r in rows}
    for ax, task in zip(axes[0][:2], TASKS):
        for j, (label, keys) in enumerate(listed[task]):
            curves = [v["curve"] for v in per[task, label].values()]
            if not curves or any(len(c[0]) != len(curves[0][0]) for c in curves):
                ax.plot([], [], color=f"C{j}", label=f"{label}: diverged or missing")
                continue
            shift = size["steps"] * size["dtau"] if keys is None else 0.0  # Langevin starts at the flow's end
            ax.plot(curves[0][0] + shift, np.exp(np.mean([np.log(c[1]) for c in curves], axis=0)), color=f"C{j}",
                    label=f"{label} (dtau {row[task, label]['dtau']:g})")
        if task == "icl":
            for value in predicted.values():
                ax.axhline(value, color="0.5", ls=":", lw=0.8)
            ax.plot([], [], color="0.5", ls=":", lw=0.8, label="T N d_out/(2ML)")
        ax.set_yscale("log")
        ax.set_xlabel("training time tau (Adam: its own tau = dtau steps)")
        ax.set_ylabel(f"{task}: training risk R (geometric mean over seeds)")
    ax = axes[0][2]
    for i, task in enumerate(TASKS):
        for j, (label, _) in enumerate(listed[task]):
            bar(ax, j + 0.15 * (i - 0.5), row[task, label]["intervals"]["change"], marker="os"[i], color=f"C{j}",
                label=task if j == 0 else None)
    ax.axhspan(-common.PLATEAU, common.PLATEAU, color="0.6", alpha=0.4,
               label=f"plateau (+-{common.PLATEAU:.0%}; Langevin, over its "
               f"window: +-{NOISY:.0%})")
    ax.axhspan(-NOISY, NOISY, color="0.8", alpha=0.3)
    other = [label for label, _ in listed["digits"]]
    ax.set_xticks(range(len(listed["icl"])))
    ax.set_xticklabels([a if i >= len(other) or a == other[i] else f"{a} / {other[i]}"
                        for i, (a, _) in enumerate(listed["icl"])], rotation=30, fontsize=7)
    ax.set_ylabel("R's relative change over the last fifth")
    ax.set_title(level, fontsize=9)
    ax = axes[1][0]
    for i, T in enumerate(size["temperatures"]):
        bar(ax, T, row["icl", langevin(T)]["intervals"]["equipartition"], marker="o",
            color=f"C{len(listed['digits']) + i}", label=f"T = {T:g}")
    if factor:
        ax.plot(size["temperatures"], [np.mean(list(factor.values()))] * 2, "k--", lw=0.8,
                label="quadratic model (step and window)")
    ax.axhline(1, color="0.4", lw=0.8, label="equipartition")
    ax.axhspan(1 / BAND, BAND, color="0.6", alpha=0.3, label=f"x/ {BAND:g}")
    ax.set_xscale("log")
    ax.set_xlabel("temperature T")
    ax.set_ylabel(f"icl: R* / (T N d_out/(2ML)), dtau_L = {dtau_l:g}")
    ax.set_title(f"{level}; power of R* in T {fmt(power(per, size))}", fontsize=8)
    titles = {"icl": "icl: the flow's held-out ratio minus the method's (zero predictor: ratio 1)",
              "digits": f"digits: accuracy minus the flow's (logistic {pixel['logistic']:.3f}, centroid "
                        f"{pixel['centroid']:.3f})"}
    for ax, task in zip(axes[1][1:], TASKS):
        for j, (label, _) in enumerate(listed[task]):
            r = row[task, label]
            style = dict(marker="*" if r["chosen"] else "o", ms=12 if r["chosen"] else 6, color=f"C{j}",
                         label=f"{label}{' (chosen on validation)' if r['chosen'] else ''}")
            if label == "flow":
                ax.plot(0, 0, ls="none", **style)
            bar(ax, j, r["intervals"]["to_flow"], **style)
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xticks(range(len(listed[task])))
        ax.set_xticklabels([label for label, _ in listed[task]], rotation=30, fontsize=7)
        ax.set_ylabel("better than the flow, paired by seed (judging half)")
        ax.set_title(f"{titles[task]}\n{level}", fontsize=8)
    common.finish_axes([a for r in axes for a in r], legend_size=6)
    common.save_figure(fig, "methods", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

#!/usr/bin/env python3
"""Training methods, to where they end: where do the gradient flow the
theory analyses, minibatch SGD (b = N/4, N/16), Adam and mean-field Langevin
(T = 1e-4, 1e-3) end, and does any of them generalise better than the flow?

Setting: M = 16, L = 4, seeds 6..10 (1..5, the earlier design's run, are
this design's pilot). icl: 256 training sequences, each seed its own
(data.seed = seed + 10), one held-out set of 512; the digits: the first 256
training images, the test split (359) held out. The runs of a seed share its
particles and data: methods are compared paired by seed.

The step. Euler's step on the squared loss is stable below 2N /
lambda_max(K_all) (`ntk.every`: /history/euler_dtau_max). On icl it falls as
the flow trains: a pilot flow (seed 1, data.seed 11, dtau 0.05) measured
1.17 at tau 0, 0.105 at 30, settling at 0.0871 by 170; the earlier dtau 0.1
lay above it from tau ~ 35, its flows ending at the edge of stability
(kappa_max 19.96 ~ 2/0.1). So the icl flow and SGD b = 64 step 0.05 (0.57
of that bound), SGD b = 16 0.025: a minibatch's stable step is below the
whole set's, and at 0.05 the pilot's b = 16 run jumped (R x3.3 between rows)
and hovered at 5e-9..5e-7 from tau 150 to 250, at 0.025 it interpolated by
tau 210, SGD b = 64 at 0.05 by 200 (bounds above 0.14, 0.10). They record
the bound 20 times a run, the Langevin runs 8. Exempt: Adam (dtau 0.01: it
divides by the gradient's running RMS, so the bound is not its step's) and
the digits (dtau 0.1, as before: the cross-entropy's Gauss-Newton curvature
is at most half the squared loss's, so the number would suffice, but a
K_all of N d_out = 2560 rows costs more than a run; and no affordable step
is stable throughout: pilot flows at dtau 0.1, 0.05, 0.025 all had R jump
between rows, x560, x72, x19, as in width_depth: the digits runs are
gradient descent at its step, and their criteria ask where such runs end).

The budget. icl flow and SGD to tau = 250 (5000, 10000 steps): the pilot's
flow reached 1e-10 R(0) = 4.5e-11 at tau 160 (a decade per 21 tau), its SGD
runs at 200 and 210. The digits to tau = 150 (1500 steps): the pilot flows
were separated (>= 99.6 %) by tau 30 at all three steps, but a jump can
undo it (dtau 0.05: 98.4 % just after one at tau 74). Adam
1000 steps, and not in criteria 1-2: with a constant step it does not
settle (a pilot of 3000 steps: below 1e-10 R(0) by its tau 2.3, then a cycle
every 4-5 of its tau from ~1e-20 up to 1e-7..3e-5 and back, its last R where
the budget cuts a cycle); its endings are reported beside them.

Where a run ends: common.run_ending, the drivers' rule. "Interpolated" (R <=
1e-10 R(0)) or "separated" (>= 99 % of the training set at a logit margin >=
log 9, from `mft forward --from RUN` at its end: the digits) has ended; else
a "plateau" when the line fitted to log R over the last fifth changes R by
under 5 % ("still falling", "rising": not ended; the last R an upper bound).

Langevin. Near a minimum that fits the data the stationary risk is
T N d_out / (2 M L) (section 13), Euler-Maruyama's 1/(1 - dtau kappa/2)
times that along a mode of kappa = lambda(K_all)/N. So it starts from each
seed's flow at its end at dtau_L = 0.1 / kappa_max (the largest at the
flows' ends, `mft ntk`; two digits, rounded down), to tau 8: R* is R's mean
over tau in [4, 8], its stationarity the second half's mean over the
first's, minus 1 (the quadratic model's factor printed). Not on the digits.

Chosen on one half, judged on the other: each held-out set is split once
(stats.validation_split, seed 0); the method best on the validation half
(mean over seeds; icl: held-out risk over the zero predictor's; digits:
error rate) is compared with the flow on the judging half, paired by seed.

Power (stats.Plan lines): the pilot is seeds 1..5 of the earlier run
(docs/experiments/methods.csv before this design), each spread its
interval's half-width sqrt(5) / t_{0.975,4}. The tightest: icl's difference
to the flow, 0.071 against the pilot's 0.077 (resolved about half the time).

Criteria, stated before the runs (95 % Student-t over the seeds, 4 dof):
  1. icl: every flow and SGD run has ended (interpolated or plateau);
  2. digits: the same (separated, interpolated or plateau);
  3. icl: equipartition at T = 1e-4: R* / (T N d_out / (2 M L)) has an
     interval inside [1/1.15, 1.15];
  4. icl: R* linear in T: the per-seed power log(R*(1e-3) / R*(1e-4)) /
     log 10, paired by seed, has an interval inside [0.9, 1.1];
  5. icl: the method best on validation beats the flow on the judging half
     (the flow's ratio minus its, paired, interval above 0);
  6. digits: the method best on validation (the best but the flow, when the
     flow is) generalises like the flow: its accuracy minus the flow's on
     the judging half, paired, has an interval inside +-0.03.
Sanity checks (of the design):
  a. icl: every Euler-stepped run (flow, SGD, Langevin) keeps its dtau below
     /history/euler_dtau_max at every kernel row;
  b. icl: every flow run descends: R never rises between history rows (the
     gradient flow cannot; a rise is a step too large);
  c. icl: Langevin is stationary: at each T its window's change has an
     interval inside +-15 %;
  d. paired: a seed's flow, SGD and Adam runs start from one R(0), each
     Langevin run from its flow's last R (relative 1e-9).
Each can fail: 1-2 if a run is above 1e-10 R(0) (digits: short of the
margins, e.g. after a jump) at the budget's end and not on a plateau; 3-4
if the step, the window or the curvature bias R*, or the seeds scatter (the
first design's ratios 1.5, 2.7 and power 1.25 fail both); 5 if the flow is
best on validation or the chosen no better on the judging half; 6 if it is
better or worse by over 0.03, or the seeds scatter; a-b at a minimum
sharper than the pilot's; c if R* drifts; d if the runs do not share their
start. Criterion 6 was "beats the flow": the pilot's 0.0067 is a third of
five seeds' half-width, so it could only fail for want of power; 0.03 is
about the gap between the pixel baselines on the judging half (logistic
0.922, nearest centroid 0.894); the pilot's [-0.016, 0.029] lies inside it.

What was seen before these were stated (docs/EXPERIMENTS.md section 6:
seeds 1..5, dtau 0.1, 1500 steps): icl final R 1.4e-9 (flow), 2.0e-11 and
1.9e-8 (SGD b = 64, 16), 1.7e-14 (Adam), every run still falling or rising
(a plateau: 0 of 20); digits 1.0e-3 to 1.6e-3, Adam 1.6e-5 (1 of 20);
Langevin (dtau_L 0.005) R* 1.07 [1.01, 1.12] and 1.21 [1.15, 1.26] of
equipartition, power 1.05 [1.03, 1.08], windows inside +-15 %; chosen SGD
b = 16 on both tasks, better than the flow by 0.077 [0.006, 0.148] (icl)
and 0.007 [-0.016, 0.029] (digits). The pilots above (seed 1 alone, no
held-out data), CPU seconds a step on the shared cores: icl flow 0.079 with
a kernel every 50 steps (those rows took no longer), SGD b = 16 0.006, Adam
0.077, digits flow 0.046.

  python3 scripts/experiments/methods.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

(--slurm submits the runs from the drawn particles; the rest follows locally
with --from-sweep.) Cost at the earlier full run's seconds a step
(methods_timing.csv; 59 minutes on 2 shared cores), per seed: icl flow
5000 x 0.161, SGD 5000 x 0.046 + 10000 x 0.015, Adam 1000 x 0.163; digits
1500 x 0.124 + Adam 1000 x 0.079; Langevin 2 x ~1900 x 0.145 (dtau_L ~
0.0043); about 2160 s: about 90 minutes on 2 cores (about 45 at the pilots'
CPU rates). Writes methods.csv (per task and method; euler_margin the
smallest euler_dtau_max / dtau; risk the final R's geometric mean,
Langevin's R*; separated the mean fraction at the margin; to_flow positive
when better; the runs' mft version and time), methods_timing.csv (wall
seconds a step), methods-criteria.txt and exp_methods.png.
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

# Per task: the flow's and SGD's step (sgd_step: SGD's fraction of it, by
# batch divisor), the tau they run to, their history rows and (icl) kernel
# rows; Adam its own step and steps on both.
FULL = dict(seeds=[6, 7, 8, 9, 10], M=16, L=4, icl_sequences=256, held_out=512, digits_train=256, digits_test=359,
            icl=dict(dtau=0.05, sgd_step={16: 0.5}, tau=250.0, rows=100, kernels=20),
            digits=dict(dtau=0.1, sgd_step={}, tau=150.0, rows=60), adam=dict(dtau=0.01, steps=1000, rows=40),
            batches=(4, 16), temperatures=(1e-4, 1e-3), langevin_tau=8.0, burn=4.0, langevin_rows=200,
            langevin_kernels=8)
QUICK = dict(seeds=[1, 2], M=4, L=2, icl_sequences=16, held_out=16, digits_train=32, digits_test=32,
             icl=dict(dtau=0.02, sgd_step={4: 0.5}, tau=0.4, rows=10, kernels=2),
             digits=dict(dtau=0.05, sgd_step={}, tau=1.0, rows=10), adam=dict(dtau=0.01, steps=20, rows=10),
             batches=(2, 4), temperatures=(1e-4, 1e-3), langevin_tau=0.4, burn=0.2, langevin_rows=20,
             langevin_kernels=2)
TASKS = ("icl", "digits")
READOUT = {"icl": {}, "digits": {"readout.kind": "mean", "readout.dim": 10, "loss.kind": "cross-entropy"}}
DATA_SEED = 10     # icl: data.seed = seed + DATA_SEED, each seed its own training set
SPLIT_SEED = 0     # stats.validation_split of the held-out sets
NOISY = 0.15       # sanity c: |change| over a Langevin run's window
STIFF = 0.1        # dtau_L kappa_max
BAND = 1.15        # criterion 3: R* / (T N d_out / (2 M L)) inside [1/BAND, BAND]
POWER = 0.1        # criterion 4: the power inside [1 - POWER, 1 + POWER]
ALIKE = 0.03       # criterion 6: the digits' accuracy difference inside +-ALIKE
SAME_START = 1e-9  # sanity b, d: relative
ENDED = ("interpolated", "separated", "plateau")  # common.ENDINGS that have ended
# The pilot (the earlier design's seeds 1..5; docs/experiments/methods.csv
# and methods-criteria.txt before this design): each spread is its
# interval's half-width sqrt(5) / t_{0.975,4}; the power's interval, quoted
# to 3 digits (1.05 [1.03, 1.08]), read at its widest, half-width 0.03.
PILOT = dict(seeds=5, equipartition=0.0406108, power=0.0241611, icl_better=0.0570556, icl_mean=0.0770791,
             digits_better=0.0182742, window=0.0386476)
COLUMNS = ["task", "method", "dtau", "seeds", "diverged", "euler_margin", "risk", "risk_low", "risk_high", "change",
           "change_low", "change_high", "ending", "separated", "equipartition", "equipartition_low",
           "equipartition_high", "validation", "held_out", "held_out_low", "held_out_high", "to_flow", "to_flow_low",
           "to_flow_high", "chosen"]


# The t-interval over seeds of the finite values (None below two).
interval = stats.finite_interval


def trained(size, task, N):
    """(label, mft keys) of the methods run from the drawn particles: the
    flow and SGD (batches N / divisor) to the task's tau, with the stable
    step's record where it bounds theirs (icl), and Adam at its own step."""
    plan, adam = size[task], size["adam"]

    def keys(dtau):
        steps = int(round(plan["tau"] / dtau))
        every = max(1, steps // plan["rows"])
        kernels = {"ntk.every": every * max(1, plan["rows"] // plan["kernels"])} if "kernels" in plan else {}
        return {"train.dtau": dtau, "train.steps": steps, "output.history_every": every, **kernels}
    out = [("flow", {"train.method": "flow", **keys(plan["dtau"])})]
    for divisor in size["batches"]:
        out.append((f"sgd b={N // divisor}", {"train.method": "sgd", "train.batch": N // divisor,
                                              **keys(plan["dtau"] * plan["sgd_step"].get(divisor, 1.0))}))
    return out + [("adam", {"train.method": "adam", "train.dtau": adam["dtau"], "train.steps": adam["steps"],
                            "output.history_every": max(1, adam["steps"] // adam["rows"])})]


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


def euler_margin(history, dtau):
    """The smallest /history/euler_dtau_max over dtau of a run's kernel rows
    (NaN without them)."""
    bound = np.asarray(history.get("euler_dtau_max", []), float)
    bound = bound[np.isfinite(bound)]
    return float(bound.min() / dtau) if bound.size else np.nan


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
    import methods_figure  # imports this driver: here, not at the top, so that importing it stays acyclic
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    import h5py
    seeds, temperatures = size["seeds"], size["temperatures"]
    listed, runs = {}, []
    for task in TASKS:
        listed[task] = trained(size, task, size["icl_sequences"] if task == "icl" else size["digits_train"])
        runs += [Run(run_name(task, label, s), {
            **task_args(task, size, options, s), **keys, "model.heads": size["M"], "model.slices": size["L"],
            "init.seed": s, "output.snapshot_every": keys["train.steps"]})
            for label, keys in listed[task] for s in seeds]
    if not options.from_sweep and not options.slurm:
        print(f"[methods] {len(runs)} runs, then the kernels, {len(seeds) * len(temperatures)} Langevin runs and "
              "the forward passes; the full mode takes about 90 minutes on 2 cores", flush=True)
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
    dtau_l = round_down(min(size["icl"]["dtau"], STIFF / top)) if np.isfinite(top) else size["icl"]["dtau"]
    steps_l = max(10, int(round(size["langevin_tau"] / dtau_l)))
    every_l = max(1, steps_l // size["langevin_rows"])
    print(f"[methods] Langevin: dtau_L = {dtau_l:g} (largest lambda_max(K_all)/N at the flows' ends {top:.4g}; "
          f"dtau_L kappa_max {dtau_l * top:.3f}), {steps_l} steps", flush=True)
    names = {(task, label, s): run_name(task, label, s) for task in TASKS for label, _ in listed[task] for s in seeds}
    names.update({("icl", langevin(T), s): f"{run_name('icl', langevin(T), s)}-x{dtau_l:g}" for T in temperatures
                  for s in seeds})
    paths.update(common.execute("methods", [Run(names["icl", langevin(T), s], {
        **task_args("icl", size, options, s), "data.test_sequences": 0, "model.heads": size["M"],
        "model.slices": size["L"], "init.seed": s, "init.file": str(paths[flows[s]]), "train.method": "flow",
        "train.temperature": T, "train.dtau": dtau_l, "train.steps": steps_l, "output.history_every": every_l,
        "ntk.every": every_l * max(1, size["langevin_rows"] // size["langevin_kernels"]),
        "output.snapshot_every": steps_l}) for T in temperatures for s in flows], local))
    listed["icl"] += [(langevin(T), None) for T in temperatures]

    # Every run's particles at its end on the held-out set, and the digits'
    # logits on their training set (always rerun: cheap, and never from an
    # older run's particles).
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
        **READOUT[key[0]]}, command="forward") for key in names if names[key] in paths] + [
        Run(f"{names[key]}-training", {"from": str(paths[names[key]]), "snapshot": -1}, command="forward")
        for key in names if key[0] == "digits" and names[key] in paths], fresh))
    halves = {task: stats.validation_split(len(held[task][1]), 0.5, SPLIT_SEED) for task in TASKS}

    predicted = {T: T * size["icl_sequences"] / (2 * size["M"] * size["L"]) for T in temperatures}
    per = {}  # (task, label): {seed: what its run measured}
    for task in TASKS:
        for label, keys in listed[task]:
            per[task, label] = {}
            for s in (s for s in seeds if names[task, label, s] in paths):
                name = names[task, label, s]
                h, cfg = common.history(paths[name])
                with h5py.File(paths[f"{name}-held-out"], "r") as f:
                    predictions = np.asarray(f["forward/predictions"][()], float)
                targets = np.asarray(held[task][1], float).reshape(len(predictions), -1)
                tau, risk = np.asarray(h["tau"], float), np.asarray(h["risk"], float)
                used = [paths[name], paths[f"{name}-held-out"]]
                separated = np.nan
                if keys is None:  # Langevin: R* and its stationarity over its window
                    end, c = float(np.mean(risk[tau >= size["burn"] - 1e-12])), window_change(h, size["burn"])
                    ending = common.ending(c, NOISY)
                    used.append(paths[f"{flows[s]}-ntk"])
                else:
                    end, c, logits = float(risk[-1]), common.change(h, common.last_fifth(h)), None
                    if task == "digits":
                        with h5py.File(paths[f"{name}-training"], "r") as f:
                            logits = np.asarray(f["forward/predictions"][()], float)
                        separated = common.margin_fraction(logits, digits_train[1])
                        used.append(paths[f"{name}-training"])
                    ending = common.run_ending(h, logits=logits, labels=digits_train[1] if task == "digits" else None)
                dtau = float(cfg["train.dtau"])
                per[task, label][s] = {
                    "risk": end, "change": c, "ending": ending, "separated": separated, "start": float(risk[0]),
                    "validation": measure(task, predictions, targets, halves[task][0]),
                    "judged": measure(task, predictions, targets, halves[task][1]), "dtau": dtau,
                    "euler_margin": euler_margin(h, dtau), "runs": used, "rise": float(np.max(
                        np.diff(risk) / risk[:-1], initial=-np.inf)),
                    "ratio": end / predicted[float(cfg["train.temperature"])] if keys is None else np.nan,
                    "per_step": (h["wall_time"][-1] - h["wall_time"][0]) / max(1, h["step"][-1] - h["step"][0]),
                    "curve": (tau, risk), "bound": (tau, np.asarray(h.get("euler_dtau_max", tau * np.nan), float))}
    burn = int(round(size["burn"] / dtau_l))
    factor = {s: model_factor(kappa[s], dtau_l, burn, steps_l) for s in kappa}
    rows, chosen = table(per, listed, size)
    common.write_csv("methods", options, COLUMNS, rows)
    common.write_csv("methods_timing", options, ["task", "method", "seconds_per_step"], rows)
    for r in rows:
        print(f"{r['task']:6} {r['method']:17} R {r['risk']:.3e}, change {r['change']:+.3f}, {r['ending']}; "
              f"euler_dtau_max/dtau >= {r['euler_margin']:.3g}; better than the flow by {r['to_flow']:+.4f}")
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
    lines = plans(len(seeds)) + criteria(per, listed, rows, size, chosen, dtau_l, top, factor)
    common.write_criteria("methods", options, lines)
    methods_figure.plot(per, listed, rows, size, predicted, factor, pixel, dtau_l, options)


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
            mean = lambda key: float(np.mean([v[key] for v in got.values()])) if got else np.nan
            row = {"task": task, "method": label, "dtau": next((v["dtau"] for v in got.values()), np.nan),
                   "seeds": len(size["seeds"]), "diverged": len(size["seeds"]) - len(got),
                   "euler_margin": float(np.min([v["euler_margin"] for v in got.values()])) if got else np.nan,
                   "ending": common.endings_text([v["ending"] for v in got.values()]),
                   "separated": mean("separated"), "validation": mean("validation"),
                   "chosen": "yes" if label == chosen[task] else "", "intervals": iv,
                   "seconds_per_step": mean("per_step"), "runs": [p for v in got.values() for p in v["runs"]]}
            for key, i in iv.items():
                values = (i.value, i.low, i.high) if i else (np.nan,) * 3
                row[key], row[key + "_low"], row[key + "_high"] = np.exp(values) if key == "risk" else values
            rows.append(row)
    return rows, chosen


def plans(seeds):
    """The power of criteria 3-6 and sanity check c, from the pilot."""
    p = PILOT
    return [stats.Plan(name, band, spread, p["seeds"], seeds).line() for name, band, spread in (
        (f"icl: R* / (T N/(2ML)) at T = 1e-4 inside [1/{BAND:g}, {BAND:g}] (the nearer side)", 1 - 1 / BAND,
         p["equipartition"]),
        (f"icl: the power of R* in T inside [{1 - POWER:g}, {1 + POWER:g}]", POWER, p["power"]),
        ("icl: the chosen method better than the flow, above 0 (band: the pilot's difference)", p["icl_mean"],
         p["icl_better"]),
        (f"digits: the chosen method's accuracy minus the flow's inside +-{ALIKE:g}", ALIKE, p["digits_better"]),
        (f"icl: Langevin's change over its window inside +-{NOISY:g} (sanity c)", NOISY, p["window"]))]


def criteria(per, listed, rows, size, chosen, dtau_l, top, factor):
    lines = []
    risks = lambda task, label: [v["risk"] for v in per[task, label].values()]
    ended = {"icl": "interpolated (R <= 1e-10 R(0)) or on a plateau", "digits": "separated (>= 99 % of the "
             "training set at a logit margin >= log 9), interpolated or on a plateau"}
    for task in TASKS:  # Adam reported beside them: it does not settle (the docstring)
        ends = {label: [v["ending"] for v in per[task, label].values()] for label, keys in listed[task] if keys}
        done = sum(ends[label].count(x) for label in ends if label != "adam" for x in ENDED)
        lines.append(common.criterion(
            f"{task}: every flow and SGD run has ended: {ended[task]}", done == (len(ends) - 1) * len(size["seeds"]),
            f"{done} of {(len(ends) - 1) * len(size['seeds'])} runs; " + "; ".join(
                f"{label}: {common.endings_text(e)}, log10 R {fmt(interval(np.log10(risks(task, label))))}"
                + (f", separated {min(v['separated'] for v in per[task, label].values()):.3f} at the least"
                   if task == "digits" else "") for label, e in ends.items())))
    cold, warm = size["temperatures"][0], size["temperatures"][-1]
    hot = {T: per["icl", langevin(T)] for T in size["temperatures"]}
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
        claim = ("beats the flow on the judging half (the flow's held-out ratio minus its, paired by seed, interval "
                 "above 0)" if task == "icl" else "generalises like the flow on the judging half (its accuracy minus "
                 f"the flow's, paired by seed, interval inside +-{ALIKE:g})")
        text = f"{task}: the method best on the validation half {claim}"
        scores = f"validation {'ratios' if task == 'icl' else 'accuracies'}, means over seeds: " + ", ".join(
            f"{r['method']} {r['validation']:.4g}" for r in rows if r["task"] == task)
        if best == "flow" and task == "digits":  # alike with itself is no test: the best of the others is judged
            best = stats.best_on_validation({r["method"]: 1 - r["validation"] for r in rows
                                             if r["task"] == task and r["method"] != "flow"})
        if best == "flow":
            lines.append(common.criterion(text, False, f"the flow is the best on the validation half; {scores}"))
            continue
        diff = interval([better(task, per[task, best][s]["judged"], flow[s]["judged"]) for s in per[task, best]
                         if s in flow])
        holds = diff is not None and (diff.above(0.0) if task == "icl" else -ALIKE < diff.low and diff.high < ALIKE)
        lines.append(common.criterion(text, holds, f"chosen {best}: {fmt(diff)}; {scores}"))

    euler = {label: [v["euler_margin"] for v in per["icl", label].values()] for label, _ in listed["icl"]
             if label != "adam"}
    lowest = min((m for ms in euler.values() for m in ms), default=np.nan)
    lines.append(common.sanity(
        "icl: every Euler-stepped run (flow, SGD, Langevin) keeps dtau below /history/euler_dtau_max at every "
        "kernel row", np.isfinite(lowest) and lowest > 1 and all(np.isfinite(m) for ms in euler.values() for m in ms),
        "the smallest euler_dtau_max / dtau over seeds and rows: " + ", ".join(
            f"{label} {min(ms):.3g}" for label, ms in euler.items() if ms)))
    drift = {T: interval([v["change"] for v in hot[T].values()]) for T in hot}
    rises = {task: [v["rise"] for v in per[task, "flow"].values()] for task in TASKS}
    lines.append(common.sanity(
        "icl: every flow run descends: R never rises between history rows (the gradient flow cannot; a rise is a "
        "step too large)", bool(rises["icl"]) and max(rises["icl"]) <= SAME_START,
        "the largest relative change between rows, per seed: " + "; ".join(
            f"{task}{' (exempt)' if task == 'digits' else ''} " + ", ".join(f"{x:+.3g}" for x in rises[task])
            for task in TASKS)))
    lines.append(common.sanity(
        f"icl: Langevin is stationary over its window (at each T R's relative change over tau in "
        f"[{size['burn']:g}, {size['langevin_tau']:g}], second half against first, has an interval inside "
        f"+-{NOISY:.0%})", all(d is not None and -NOISY < d.low and d.high < NOISY for d in drift.values()),
        "; ".join(f"T = {T:g}: {fmt(d)}" for T, d in drift.items())))
    apart = []  # the largest relative gap of each seed's starts
    for task in TASKS:
        for s in size["seeds"]:
            starts = [per[task, label][s]["start"] for label, keys in listed[task] if keys and s in per[task, label]]
            apart += [np.ptp(starts) / max(starts)] if starts else []
    for T in size["temperatures"]:
        apart += [abs(v["start"] / per["icl", "flow"][s]["risk"] - 1) for s, v in hot[T].items()
                  if s in per["icl", "flow"]]
    lines.append(common.sanity(
        f"paired by seed: a seed's flow, SGD and Adam runs start from one R(0), and each Langevin run from its "
        f"flow's last R (relative {SAME_START:g})", bool(apart) and max(apart) <= SAME_START,
        f"the largest relative difference {max(apart, default=np.nan):.2g} over {len(apart)} comparisons"))
    return lines


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

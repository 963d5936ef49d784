#!/usr/bin/env python3
"""Does run.precision = mixed change the science? Two findings measured in
both precisions, paired by seed, the differences set against the seeds'
spread.

mixed runs the attention and MLP kernels' products in float (16 lanes a
register with AVX-512) and keeps the particles, their updates, every sum
across sequences, slices and ranks, and the output in double. Its rounding
(about 1e-7 relative per product) is far below a mean-field run's finite-M
fluctuations (order M^-1/2), so it should change nothing a seed-to-seed
comparison can see; this driver measures whether it does.

1. The mean-field width law (EXPERIMENTS.md §3, mean_field.py's design on
   fewer seeds): icl-linear, N = 16 sequences of n = 8 tokens, Euler flow
   dtau = 0.02 for 100 steps (tau = 2), L = 4; per seed a reference of
   M_ref = 2048 heads and widths M in {16, ..., 256} (the widths §3 found
   unsaturated), particle m of every run starting equal to the reference's;
   D(M) / sqrt(1 - M/M_ref) at tau = 2 and its per-seed log-log slope
   against M, in each precision (every run of a seed, reference included,
   in that precision). Seeds 1..6.
2. The digits (EXPERIMENTS.md §2, width_depth.py's data, split and
   protocol): M = 8, L = 1, the 1,150 training images, cross-entropy, Euler
   dtau = 0.025 for 4000 steps; per seed the final training risk (the line
   fitted to log R over the last fifth, width_depth.fitted_end) and the
   accuracy on the 359 test images (`mft forward` in the same precision).
   Seeds 1..5.

Criteria, stated before the runs. For each quantity q (the slope; log R;
the test accuracy) the paired difference q_mixed - q_double over the
seeds has a 95 % Student-t interval (seeds - 1 dof) that lies inside
+-0.25 s, s the standard deviation of q_double over the seeds: a change of
a quarter of the seed spread is below what the experiments' 5 to 10 seeds
resolve (their standard error is s / sqrt(seeds) >= 0.32 s), so a mixed
run could not change a verdict they print.
  1. the width law's slope;
  2. the digits' final log R;
  3. the digits' test accuracy.
Measured, not judged: the tau at which the digits' R in the two precisions
first differs by more than 1 %, per seed (a step at which R jumps between
history rows, as §2 records, amplifies any rounding, double's own too).

  python3 scripts/experiments/precision.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

72 runs; about 40 minutes on 2 cores (the references and the digits runs
are most of it; the mixed ones take about half the time of the double
ones). Writes precision.csv (per quantity and seed: both values and their
difference), precision-criteria.txt and exp_precision.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import copy

import numpy as np

import common
import mean_field
import stats
import width_depth
from common import Run

FULL = dict(widths=[16, 32, 64, 128, 256], L=4, reference=2048, seeds=[1, 2, 3, 4, 5, 6], N=16, n=8, steps=100,
            dtau=0.02, digits_M=8, digits_L=1, digits_seeds=[1, 2, 3, 4, 5], digits_steps=4000, digits_dtau=0.025,
            every=20, train=None, test=None)
QUICK = dict(widths=[8, 16], L=2, reference=64, seeds=[1, 2, 3], N=8, n=6, steps=6, dtau=0.02, digits_M=2,
             digits_L=1, digits_seeds=[1, 2, 3], digits_steps=20, digits_dtau=0.025, every=2, train=64, test=32)
PRECISIONS = ("double", "mixed")
SHARE = 0.25  # of the seed spread: the largest paired change that holds
COLUMNS = ["quantity", "seed", "double", "mixed", "difference"]


def width_runs(size):
    base = {"data.task": "icl-linear", "data.sequences": size["N"], "data.tokens": size["n"], "init.sigma_v": 0.5,
            "train.steps": size["steps"], "train.dtau": size["dtau"], "output.snapshot_every": size["steps"],
            "model.slices": size["L"]}
    return [Run(f"{p}-M{M}-s{s}", {**base, "model.heads": M, "init.seed": s, "run.precision": p})
            for p in PRECISIONS for s in size["seeds"] for M in size["widths"] + [size["reference"]]]


def width_slopes(paths, size, precision):
    """{seed: the log-log slope of D / sqrt(1 - M/M_ref) against M at the end}."""
    ref, out = size["reference"], {}
    for s in size["seeds"]:
        names = [f"{precision}-M{M}-s{s}" for M in size["widths"]] + [f"{precision}-M{ref}-s{s}"]
        if not all(n in paths for n in names):
            continue
        large = mean_field.heads(paths[names[-1]])
        D = [mean_field.coupling_distance(mean_field.heads(paths[n]), large) / np.sqrt(1 - M / ref)
             for n, M in zip(names, size["widths"])]
        out[s] = float(np.polyfit(np.log(size["widths"]), np.log(D), 1)[0])
    return out


def digits_runs(size, training):
    return [Run(f"digits-{p}-s{s}", {
        "data.task": "file", "data.file": training, **width_depth.READOUT, "model.heads": size["digits_M"],
        "model.slices": size["digits_L"], "init.seed": s, "train.steps": size["digits_steps"],
        "train.dtau": size["digits_dtau"], "output.history_every": size["every"],
        "output.snapshot_every": size["digits_steps"], "run.precision": p})
        for p in PRECISIONS for s in size["digits_seeds"]]


def first_apart(paths, size, seed, share=0.01):
    """The tau of the first history row where the digits' R in the two
    precisions differ by more than `share` (None: never), and the largest
    relative difference of R over the run."""
    h = {p: common.history(paths[f"digits-{p}-s{seed}"])[0] for p in PRECISIONS}
    a, b = (np.asarray(h[p]["risk"], float) for p in PRECISIONS)
    gap = np.abs(b - a) / np.abs(a)
    apart = np.nonzero(gap > share)[0]
    return (float(h["double"]["tau"][apart[0]]) if apart.size else None), float(gap.max())


def digits_measures(paths, size, test_targets, precision):
    """{seed: (final log R, test accuracy)}."""
    import h5py
    out = {}
    for s in size["digits_seeds"]:
        name = f"digits-{precision}-s{s}"
        if name not in paths or f"{name}-test" not in paths:
            continue
        h, _ = common.history(paths[name])
        with h5py.File(paths[f"{name}-test"], "r") as f:
            predictions = np.asarray(f["forward/predictions"][()], float)
        accuracy = float(np.mean(np.argmax(predictions, 1) == np.argmax(test_targets, 1)))
        out[s] = (float(np.log(width_depth.fitted_end(h))), accuracy)
    return out


def judge(text, by_seed):
    """The criterion on {seed: (q_double, q_mixed)}."""
    seeds = sorted(by_seed)
    if len(seeds) < 2:
        return common.criterion(text, False, f"{len(seeds)} seeds finished in both precisions; two are needed")
    double = np.array([by_seed[s][0] for s in seeds])
    mixed = np.array([by_seed[s][1] for s in seeds])
    diff = stats.paired(mixed, double)
    spread = float(np.std(double, ddof=1))
    bound = SHARE * spread
    holds = -bound < diff.low and diff.high < bound
    return common.criterion(
        f"{text}: the interval of q_mixed - q_double lies inside +-{SHARE:g} s_seeds", holds,
        f"difference {diff.text()}, bound +-{bound:.3g} (s_seeds {spread:.3g} over {len(seeds)} seeds); "
        f"largest |difference| {np.max(np.abs(mixed - double)):.3g}; double "
        + ", ".join(f"{v:.6g}" for v in double) + "; mixed " + ", ".join(f"{v:.6g}" for v in mixed))


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    training, test_file, _, test_targets = width_depth.split_files(options, size)
    runs = width_runs(size) + digits_runs(size, training)
    if not options.from_sweep and not options.slurm:
        print(f"[precision] {len(runs)} runs, then the digits' forward passes; the full mode takes about 40 "
              "minutes on 2 cores", flush=True)
    paths = common.execute("precision", runs, options)
    local = copy.copy(options)
    local.from_sweep, local.slurm, local.fresh = None, False, True
    paths.update(common.execute("precision", [Run(f"{r.name}-test", {
        "data.task": "file", "data.file": test_file, "init.file": str(paths[r.name]), "init.snapshot": -1,
        **width_depth.READOUT, "run.precision": r.args["run.precision"]}, command="forward")
        for r in runs if r.name.startswith("digits-") and r.name in paths], local))

    slopes = {p: width_slopes(paths, size, p) for p in PRECISIONS}
    digits = {p: digits_measures(paths, size, test_targets, p) for p in PRECISIONS}
    pairs = {"width_slope": {s: (slopes["double"][s], slopes["mixed"][s]) for s in slopes["double"]
                             if s in slopes["mixed"]},
             "digits_log_risk": {s: (digits["double"][s][0], digits["mixed"][s][0]) for s in digits["double"]
                                 if s in digits["mixed"]},
             "digits_test_accuracy": {s: (digits["double"][s][1], digits["mixed"][s][1]) for s in digits["double"]
                                      if s in digits["mixed"]}}
    rows = [{"quantity": q, "seed": s, "double": a, "mixed": b, "difference": b - a}
            for q, by_seed in pairs.items() for s, (a, b) in sorted(by_seed.items())]
    common.write_csv("precision", options, COLUMNS, rows)
    for r in rows:
        print(f"{r['quantity']:21} seed {r['seed']}: double {r['double']:.8g}, mixed {r['mixed']:.8g}, "
              f"difference {r['difference']:+.3g}")
    lines = [judge(f"width law: the per-seed slope of D / sqrt(1 - M/M_ref) against M = "
                   f"{size['widths'][0]}..{size['widths'][-1]} at tau = {size['steps'] * size['dtau']:g}",
                   pairs["width_slope"]),
             judge(f"digits (M = {size['digits_M']}, L = {size['digits_L']}, {size['digits_steps']} steps): the "
                   "final log R", pairs["digits_log_risk"]),
             judge("digits: the test accuracy", pairs["digits_test_accuracy"])]
    # How far the two trajectories stay together (not judged): a run whose R
    # jumps between rows (width_depth's largest rises) amplifies any rounding.
    apart = {s: first_apart(paths, size, s) for s in sorted(pairs["digits_log_risk"])}
    line = ("measured: the digits runs' R in the two precisions first differs by more than 1 % at tau = " +
            ", ".join(f"{t:g}" if t is not None else "never" for t, _ in apart.values()) +
            " (seeds " + ", ".join(str(s) for s in apart) + "; the largest relative difference over each run " +
            ", ".join(f"{g:.2g}" for _, g in apart.values()) + ")")
    print(line)
    lines.append(line)
    common.write_criteria("precision", options, lines)
    plot(pairs, options)


def plot(pairs, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (q, by_seed) in zip(axes, pairs.items()):
        seeds = sorted(by_seed)
        a = np.array([by_seed[s][0] for s in seeds])
        b = np.array([by_seed[s][1] for s in seeds])
        ax.plot(seeds, a, "o", label="double")
        ax.plot(seeds, b, "x", ms=9, label="mixed")
        if len(seeds) > 1:
            s = np.std(a, ddof=1)
            ax.axhspan(a.mean() - SHARE * s, a.mean() + SHARE * s, color="0.85",
                       label=f"double's mean +- {SHARE:g} s_seeds")
        ax.set_xlabel("seed")
        ax.set_ylabel(q.replace("_", " "))
    common.finish_axes(axes)
    common.save_figure(fig, "precision", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

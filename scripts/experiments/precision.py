#!/usr/bin/env python3
"""Does run.precision = mixed change the science? Two findings measured in
both precisions, paired by seed, the digits' differences set against
double's own difference across rank counts.

mixed runs the attention and MLP kernels' products in float (16 lanes a
register with AVX-512) and keeps the particles, their updates, every sum
across sequences, slices and ranks, and the output in double. Its rounding
(about 1e-7 relative per product) is far below a mean-field run's finite-M
fluctuations (order M^-1/2); the question is whether training amplifies it
into anything a seed-to-seed comparison can see.

1. The mean-field width law (EXPERIMENTS.md §3, mean_field.py's design on
   fewer seeds): icl-linear, N = 16 sequences of n = 8 tokens, Euler flow
   dtau = 0.02 for 100 steps (tau = 2), L = 4; per seed a reference of
   M_ref = 2048 heads and widths M in {16, ..., 256}, particle m of every
   run starting equal to the reference's; the per-seed log-log slope of
   D(M) / sqrt(1 - M/M_ref) at tau = 2 against M, in each precision (every
   run of a seed, reference included, in that precision). Seeds 1..3: a
   check of the design now (sanity check a), not a criterion; the earlier
   run's six seeds agreed to 3.5e-8.
2. The digits (EXPERIMENTS.md §2, width_depth.py's data, split and model):
   M = 8, L = 1, the 1,150 training images, cross-entropy, Euler
   dtau = 0.025 for 400 steps (tau = 10), a history row every 10 steps and
   particle snapshots at tau = 5 and 10. Per seed three runs: double and
   mixed on one rank, and double on two ranks, whose only difference from
   the first is the order of the sum over heads (rounding at 1e-16): the
   floor, what rounding of any kind does on this protocol. Measured at
   tau = 5 and 10: log R (the history row) and the accuracy on the 359 test
   images (`mft forward` of the snapshot, in the run's precision), and the
   test images whose predicted class differs from the double run's. Seeds
   6..15 (1..5 were the pilot, below).

Why tau = 5. §2's protocol (tau = 100) is chaotic: there double on 2 ranks
moved the final log R by 0.475 against 1 rank, so a per-seed difference
between precisions measures the chaos, not the precision. The pilot (below)
found where it starts: up to tau = 5 the floor stays near rounding (|log
R apart| 1e-16 to 8e-13 on four seeds, 1.5e-6 on the fifth; no test image
changed), then unstable stretches of the Euler flow grow any perturbation
by up to 10^9 within a unit of tau (seed 3's floor: 8e-13 at tau = 5,
8e-4 at tau = 6), and by tau = 10 the floor is mixed's size (3, 0, 10, 4,
3 test images changed, mixed 8, 0, 10, 2, 1). So the criteria are judged
at tau = 5, where double is reproducible across rank counts and a
difference is the precision's (mixed's was 10^2 to 10^8 times the floor
there); that is also where mixed's larger rounding starts to grow (pilot:
1e-8 at tau = 4 to 1e-4 at tau = 5 on two seeds), so the criteria can fail
there. tau = 10 is measured, not judged, beside its floor.

Sanity checks (checks of the design, which must hold for the criteria to
mean anything):
  a. the width law: every seed's slope in mixed equals double's within 1e-5
     (float's rounding, 6e-8, grown at most a hundredfold over 100 smooth
     steps; the earlier run saw 3.5e-8; a quarter of the seed spread is
     0.011);
  b. the digits protocol is reproducible at tau = 5 at the criteria's
     resolution: on every seed double on two ranks moves log R by less than
     a tenth of criterion 1's band (0.0029) and changes the class of at
     most one test image (a third of criterion 2's band). The pilot's
     largest: 1.5e-6, no image.
Criteria, stated before the runs (each an equivalence: the 95 % Student-t
interval of the paired difference mixed - double over the 10 seeds, 9 dof,
must lie inside +-band):
  1. the digits' log R at tau = 5; band 0.0291, a quarter of the seeds'
     spread of log R there (0.117 in the pilot): below what the
     experiments' 5 to 10 seeds resolve (their standard error is
     s / sqrt(seeds) >= 0.32 s), so no verdict could turn on it;
  2. the digits' test accuracy at tau = 5; band 3 images of 359 (0.00836):
     the narrowest accuracy interval §2 prints is +-0.008 (its chosen
     size's, 0.941 [0.933, 0.949]), and the earlier design's
     band (0.0026, less than one image) could not be resolved at all.
Each can fail: 1 if mixed's rounding has grown to a percent of R by
tau = 5 on a few seeds (the pilot's largest was 1.3e-4: the growth starts
there), or by a systematic shift; 2 if mixed changes the class of more than
a few test images a seed by tau = 5 in one direction, or if the changes
scatter so that 10 seeds cannot resolve 3 images. A sanity check that
fails is a broken design (b: the protocol amplifies rounding already by
tau = 5), not a finding.

Measured, not judged: at tau = 10, mixed's |log R apart|, changed images
and accuracy difference beside the floor's; and per seed the first tau at
which mixed and the floor move log R by more than 1e-6.

Power (stats.Plan; the pilot's seeds 1..5 are excluded from the verdicts):
criterion 1, the pilot's paired differences at tau = 5 spread 5.70e-5, so
10 seeds give a half-width of 4.1e-5 against the band 0.0291; criterion 2,
the pilot's accuracy differences at tau = 5 were all 0, so the plan takes
the largest spread measured on this question, the pilot's at tau = 10
(-5, 0, -1, +1, +1 images, 0.00694): 10 seeds give 0.00496 (1.8 images)
against the band 0.00836.

What was seen before these were stated. The earlier design (commit
16de858; 6 seeds of the width law, the digits at §2's 4000 steps, seeds
1..5; results in docs/experiments/precision-criteria.txt as of cea2c35):
width-law slopes equal across precisions to 3.5e-8 (its criterion 1, a
band of 0.25 s = 0.011, held; relabelled here as sanity check a); the
digits' final log R apart by -0.14, -0.02, +3.26, +0.40, -0.12 (its
criterion 2 failed) and the test accuracy by +2, -1, +1, 0, +1 images (its
criterion 3 failed: its band, 0.0026, was less than one image); R first
apart by 1 % at tau = 13.5 to 30.5. A control run after those (EXPERIMENTS
§17): double on 2 ranks against 1 moved the final log R by 0.475 [-0.52,
1.47]. Pilot of this design (seeds 1..5, 600 steps, double and mixed on 1
rank; double on 2 ranks for seeds 1 and 2 to 600 steps, 3 to 5 to 400):
|log R, mixed - double| at tau = 5: 9.5e-7, 4.9e-9, 6.8e-5, 2.6e-9,
1.3e-4; at tau = 10: 2.4e-3, 1.7e-8, 5.4e-4, 6.7e-4, 1.6e-3; the floor
at tau = 5: 3.8e-14, 1.1e-16, 8.2e-13, 3.3e-16, 1.5e-6; at tau = 10:
2.3e-3, 4.5e-16, 3.9e-3, 2.3e-4, 5.7e-4. Test images changed at tau = 5:
none, by mixed or the floor, on any seed; at tau = 10: mixed 8, 0, 10, 2,
1, the floor 3, 0, 10, 4, 3. Double's log R at tau = 5:
0.192, 0.451, 0.215, 0.343, 0.185 (test accuracy 0.56 to 0.75); at
tau = 10: -0.39 to -0.02 (0.73 to 0.84).

  python3 scripts/experiments/precision.py [--quick] [--update-docs] [--jobs J] [--ranks R]

Runs locally only (runs on two rank counts and `mft forward`): 36
width-law runs, 30 digits runs of 400 steps (10 of them on two ranks) and
60 forward passes. About 20 minutes on 2 cores, estimated from the earlier
run (40 minutes for 72 width-law runs on 6 seeds and 10 digits runs of 4000
steps; the digits at §2's 0.035 s a step were about 12 of them, so the
width law's 3 seeds are about 14) and the pilot's rate for the digits (400
steps at 0.035 s a step; 20 one-rank runs, 10 two-rank runs and the
forward passes about 5 minutes). Writes precision.csv (per quantity, seed
and tau: double, mixed, their difference, double on the other rank count
and its difference, the test images changed by each; every row its runs'
mft version and creation time), precision-criteria.txt and
exp_precision.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import copy
from pathlib import Path

import numpy as np

import common
import mean_field
import stats
import width_depth
from common import Run

FULL = dict(widths=[16, 32, 64, 128, 256], L=4, reference=2048, seeds=[1, 2, 3], N=16, n=8, steps=100, dtau=0.02,
            digits_M=8, digits_L=1, digits_seeds=list(range(6, 16)), horizons=[200, 400], digits_dtau=0.025,
            every=10, train=None, test=None)
QUICK = dict(widths=[8, 16], L=2, reference=64, seeds=[1, 2], N=8, n=6, steps=6, dtau=0.02, digits_M=2,
             digits_L=1, digits_seeds=[1, 2], horizons=[10, 20], digits_dtau=0.025, every=2, train=64, test=32)
PRECISIONS = ("double", "mixed")
SLOPE_ROUNDING = 1e-5    # sanity a: the largest slope difference rounding can make
BAND_RISK = 0.25 * 0.11657  # criterion 1: a quarter of the pilot's seed spread of log R at tau = 5
BAND_IMAGES = 3          # criterion 2, in test images (of 359)
FLOOR_RISK = 0.1 * BAND_RISK  # sanity b: the floor's largest |log R apart| at the judged tau
FLOOR_IMAGES = 1         # sanity b: the most test images the floor may change there
APART = 1e-6             # the measured onset: |log R apart| above this
# The pilot (seeds 1..5, run by hand before this design was committed; its
# numbers are the docstring's): the
# spread of the paired differences mixed - double at tau = 5 (log R), and the
# largest spread of the accuracy differences measured (tau = 10; at tau = 5
# all five were 0).
PILOT = dict(seeds=5, risk_spread=5.6974e-5, accuracy_spread=2.4900 / 359)
COLUMNS = ["quantity", "seed", "tau", "double", "mixed", "difference", "other_ranks", "floor", "mixed_changed",
           "ranks_changed"]


def width_runs(size):
    base = {"data.task": "icl-linear", "data.sequences": size["N"], "data.tokens": size["n"], "init.sigma_v": 0.5,
            "train.steps": size["steps"], "train.dtau": size["dtau"], "output.snapshot_every": size["steps"],
            "model.slices": size["L"]}
    return [Run(width_name(p, M, s), {**base, "model.heads": M, "init.seed": s, "run.precision": p})
            for p in PRECISIONS for s in size["seeds"] for M in size["widths"] + [size["reference"]]]


def width_name(precision, M, seed):
    return f"{precision}-M{M}-s{seed}"


def width_slope(paths, size, precision, seed):
    """The log-log slope of D / sqrt(1 - M/M_ref) against M at the end, or
    None when a run is missing."""
    ref = size["reference"]
    names = [width_name(precision, M, seed) for M in size["widths"]]
    if not all(n in paths for n in names + [width_name(precision, ref, seed)]):
        return None
    large = mean_field.heads(paths[width_name(precision, ref, seed)])
    D = [mean_field.coupling_distance(mean_field.heads(paths[n]), large) / np.sqrt(1 - M / ref)
         for n, M in zip(names, size["widths"])]
    return float(np.polyfit(np.log(size["widths"]), np.log(D), 1)[0])


def other_ranks(options):
    """The rank count of the floor's runs: another order of the sum over heads."""
    return 2 if options.ranks == 1 else 1


def digits_variants(options):
    """(label, precision, ranks) of a seed's three digits runs."""
    return [("double", "double", options.ranks), ("mixed", "mixed", options.ranks),
            ("ranks", "double", other_ranks(options))]


def digits_name(precision, ranks, seed):
    # the rank count is in the name: a run's record (.options) does not hold it
    return f"digits-{precision}-r{ranks}-s{seed}"


def digits_runs(size, training, precision, ranks):
    return [Run(digits_name(precision, ranks, s), {
        "data.task": "file", "data.file": training, **width_depth.READOUT, "model.heads": size["digits_M"],
        "model.slices": size["digits_L"], "init.seed": s, "train.steps": size["horizons"][-1],
        "train.dtau": size["digits_dtau"], "output.history_every": size["every"],
        "output.snapshot_every": size["horizons"][0], "run.precision": precision})
        for s in size["digits_seeds"]]


def forward_runs(size, paths, test_file, options):
    """`mft forward` of every digits run's snapshot at each horizon (the
    snapshots lie every horizons[0] steps), in the run's precision."""
    every = size["horizons"][0]
    return [Run(f"{digits_name(p, r, s)}-test{h}", {
        "data.task": "file", "data.file": test_file, "init.file": str(paths[digits_name(p, r, s)]),
        "init.snapshot": h // every, **width_depth.READOUT, "run.precision": p}, command="forward")
        for _, p, r in digits_variants(options) for s in size["digits_seeds"] for h in size["horizons"]
        if digits_name(p, r, s) in paths]


def digits_measures(paths, size, options):
    """{(label, seed): {"tau", "log_risk" (the history, all rows), horizon:
    (log R, predicted classes, run files)}} for the runs that finished."""
    import h5py
    out = {}
    for label, p, r in digits_variants(options):
        for s in size["digits_seeds"]:
            name = digits_name(p, r, s)
            if name not in paths:
                continue
            h, _ = common.history(paths[name])
            step, log_risk = np.asarray(h["step"]), np.log(np.asarray(h["risk"], float))
            got = {"tau": np.asarray(h["tau"], float), "log_risk": log_risk}
            for horizon in size["horizons"]:
                test = paths[f"{name}-test{horizon}"]
                with h5py.File(test, "r") as f:
                    classes = np.argmax(np.asarray(f["forward/predictions"][()], float), 1)
                row = int(np.searchsorted(step, horizon))
                if row == len(step) or step[row] != horizon:
                    raise SystemExit(f"error: {paths[name]}: no history row at step {horizon}")
                got[horizon] = (float(log_risk[row]), classes, [paths[name], test])
            out[label, s] = got
    return out


def digits_rows(digits, size, test_classes):
    """The CSV rows of log R and test accuracy at each horizon, per seed with
    all three runs."""
    rows = []
    seeds = [s for s in size["digits_seeds"] if all((v, s) in digits for v in ("double", "mixed", "ranks"))]
    for horizon in size["horizons"]:
        tau = horizon * size["digits_dtau"]
        for s in seeds:
            (a, ca, ra), (b, cb, rb), (c, cc, rc) = (digits[v, s][horizon] for v in ("double", "mixed", "ranks"))
            files = ra + rb + rc
            rows.append({"quantity": "log_risk", "seed": s, "tau": tau, "double": a, "mixed": b, "difference": b - a,
                         "other_ranks": c, "floor": c - a, "mixed_changed": "", "ranks_changed": "", "runs": files})
            acc = [float(np.mean(x == test_classes)) for x in (ca, cb, cc)]
            rows.append({"quantity": "test_accuracy", "seed": s, "tau": tau, "double": acc[0], "mixed": acc[1],
                         "difference": acc[1] - acc[0], "other_ranks": acc[2], "floor": acc[2] - acc[0],
                         "mixed_changed": int(np.sum(cb != ca)), "ranks_changed": int(np.sum(cc != ca)),
                         "runs": files})
    return rows


def equivalence(text, rows, band, unit="", scale=1.0):
    """Criterion: the paired difference's interval lies inside +-band (the
    per-seed differences quoted times `scale`: in images for an accuracy)."""
    if len(rows) < 2:
        return common.criterion(text, False, f"{len(rows)} seeds finished in both precisions; two are needed")
    double, mixed = (np.array([r[k] for r in rows]) for k in ("double", "mixed"))
    diff = stats.paired(mixed, double)
    return common.criterion(
        f"{text}: the interval of mixed - double lies inside +-{band:.3g}{unit}", -band < diff.low and diff.high < band,
        f"difference {diff.text()} over seeds {rows[0]['seed']}..{rows[-1]['seed']}; per seed "
        + ", ".join(f"{d:+.2g}" for d in scale * (mixed - double)) + "; double "
        + ", ".join(f"{v:.5g}" for v in double))


def verdicts(rows, size):
    slopes = [r for r in rows if r["quantity"] == "width_slope"]
    short = size["horizons"][0] * size["digits_dtau"]
    at = lambda q, tau: [r for r in rows if r["quantity"] == q and r["tau"] == tau]
    risk, accuracy = at("log_risk", short), at("test_accuracy", short)
    n = len(size["digits_seeds"])
    band_accuracy = BAND_IMAGES / size["images"]
    floor = [abs(r["floor"]) for r in risk]
    return [
        stats.Plan(f"digits log R at tau = {short:g}, mixed - double", BAND_RISK, PILOT["risk_spread"],
                   PILOT["seeds"], n).line(),
        stats.Plan(f"digits test accuracy at tau = {short:g}, mixed - double", band_accuracy,
                   PILOT["accuracy_spread"], PILOT["seeds"], n).line(),
        common.sanity(
            f"width law: every seed's slope of D / sqrt(1 - M/M_ref) against M = {size['widths'][0]}.."
            f"{size['widths'][-1]} at tau = {size['steps'] * size['dtau']:g} in mixed equals double's within "
            f"{SLOPE_ROUNDING:g}", len(slopes) == len(size["seeds"]) and
            all(abs(r["difference"]) < SLOPE_ROUNDING for r in slopes),
            f"{len(slopes)} of {len(size['seeds'])} seeds; slope differences "
            + ", ".join(f"{r['difference']:+.2g}" for r in slopes) + "; double "
            + ", ".join(f"{r['double']:.6g}" for r in slopes)),
        common.sanity(
            f"the digits protocol is reproducible at tau = {short:g}: on every seed double on another rank count "
            f"moves log R by less than {FLOOR_RISK:.2g} (a tenth of the band) and changes the class of at most "
            f"{FLOOR_IMAGES} test image", len(risk) == n and max(floor, default=np.inf) < FLOOR_RISK
            and all(r["ranks_changed"] <= FLOOR_IMAGES for r in accuracy),
            f"{len(risk)} of {n} seeds; |log R apart| " + ", ".join(f"{x:.2g}" for x in floor) + "; images changed "
            + ", ".join(str(r["ranks_changed"]) for r in accuracy)),
        equivalence(f"digits (M = {size['digits_M']}, L = {size['digits_L']}): log R at tau = {short:g}", risk,
                    BAND_RISK, " (a quarter of the pilot's seed spread)"),
        equivalence(f"digits: the test accuracy at tau = {short:g}", accuracy, band_accuracy,
                    f" ({BAND_IMAGES} of {size['images']} images; per seed in images)", size["images"]),
    ]


def onset(digits, label, seed):
    """The first tau at which the run `label` moves log R from double's by
    more than APART (None: never)."""
    a, b = digits["double", seed], digits[label, seed]
    apart = np.nonzero(np.abs(b["log_risk"] - a["log_risk"]) > APART)[0]
    return float(a["tau"][apart[0]]) if apart.size else None


def measured(rows, digits, size):
    """The lines of what is measured and not judged: the long horizon
    against its floor, and when each perturbation first shows."""
    long = size["horizons"][-1] * size["digits_dtau"]
    risk = [r for r in rows if r["quantity"] == "log_risk" and r["tau"] == long]
    accuracy = [r for r in rows if r["quantity"] == "test_accuracy" and r["tau"] == long]
    seeds = [r["seed"] for r in risk]
    join = lambda values, f: ", ".join(f(v) for v in values)
    text = lambda t: "never" if t is None else f"{t:g}"
    return [
        f"measured: at tau = {long:g} (seeds {join(seeds, str)}), |log R apart| mixed "
        f"{join([abs(r['difference']) for r in risk], lambda x: f'{x:.2g}')}, other rank count "
        f"{join([abs(r['floor']) for r in risk], lambda x: f'{x:.2g}')}; test images changed mixed "
        f"{join([r['mixed_changed'] for r in accuracy], str)}, other rank count "
        f"{join([r['ranks_changed'] for r in accuracy], str)}; accuracy difference in images mixed "
        f"{join([r['difference'] * size['images'] for r in accuracy], lambda x: f'{x:+.0f}')}, other rank count "
        f"{join([r['floor'] * size['images'] for r in accuracy], lambda x: f'{x:+.0f}')}",
        f"measured: the first tau at which log R is apart by more than {APART:g}: mixed "
        f"{join([onset(digits, 'mixed', s) for s in seeds], text)}, other rank count "
        f"{join([onset(digits, 'ranks', s) for s in seeds], text)} (seeds {join(seeds, str)})"]


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "precision", "`mft forward` and runs on two rank counts")
    size = dict(QUICK if options.quick else FULL)
    # §2's split, in §2's folder (one block: precision needs no kernel blocks)
    folder = Path(options.runs) / ("width_depth-quick" if options.quick else "width_depth")
    training, test_file, _, arrays = width_depth.split_files(options, {**size, "blocks": 1}, folder)
    test_classes = np.argmax(arrays["test"][1], 1)
    size["images"] = len(test_classes)  # 359 in the full mode
    runs = width_runs(size) + [r for p in PRECISIONS for r in digits_runs(size, training, p, options.ranks)]
    print(f"[precision] {len(runs) + len(size['digits_seeds'])} runs, then the digits' forward passes; the full "
          "mode takes about 20 minutes on 2 cores", flush=True)
    paths = common.execute("precision", runs, options)
    floor = copy.copy(options)
    floor.ranks = other_ranks(options)
    paths.update(common.execute("precision", digits_runs(size, training, "double", floor.ranks), floor))
    # The forward passes always rerun (a few seconds): their record names the
    # training file, not its content.
    local = copy.copy(options)
    local.fresh = True
    paths.update(common.execute("precision", forward_runs(size, paths, test_file, options), local))

    rows = []
    for s in size["seeds"]:
        slope = {p: width_slope(paths, size, p, s) for p in PRECISIONS}
        if None not in slope.values():
            rows.append({"quantity": "width_slope", "seed": s, "tau": size["steps"] * size["dtau"],
                         "double": slope["double"], "mixed": slope["mixed"],
                         "difference": slope["mixed"] - slope["double"], "other_ranks": "", "floor": "",
                         "mixed_changed": "", "ranks_changed": "",
                         "runs": [paths[width_name(p, M, s)] for p in PRECISIONS
                                  for M in size["widths"] + [size["reference"]]]})
    digits = digits_measures(paths, size, options)
    rows += digits_rows(digits, size, test_classes)
    common.write_csv("precision", options, COLUMNS, rows)
    lines = verdicts(rows, size)
    extra = measured(rows, digits, size)
    for line in extra:
        print(line, flush=True)
    common.write_criteria("precision", options, lines + extra)
    plot(rows, digits, size, options)


def plot(rows, digits, size, options):
    plt = common.pyplot()
    from matplotlib.ticker import MaxNLocator
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.9))
    ax = axes[0]
    slopes = [r for r in rows if r["quantity"] == "width_slope"]
    ax.semilogy([r["seed"] for r in slopes], [max(abs(r["difference"]), 1e-18) for r in slopes], "o",
                label="|slope, mixed - double|")
    ax.axhline(SLOPE_ROUNDING, color="0.5", ls="--", label=f"sanity bound {SLOPE_ROUNDING:g}")
    ax.set_xlabel("seed")
    ax.set_ylabel("width law: slope difference")
    ax = axes[1]
    for (label, s), got in sorted(digits.items()):
        if label == "double":
            continue
        apart = np.maximum(np.abs(got["log_risk"] - digits["double", s]["log_risk"]), 1e-17)
        ax.semilogy(got["tau"], apart, color="C1" if label == "mixed" else "C0", lw=0.8, alpha=0.7,
                    label=("mixed" if label == "mixed" else "double, other rank count") if s == size["digits_seeds"][0]
                    else None)
    ax.axhline(BAND_RISK, color="0.5", ls="--", label=f"band {BAND_RISK:.3g}")
    ax.axvline(size["horizons"][0] * size["digits_dtau"], color="k", lw=0.8, label="judged here")
    ax.set_xlabel("tau")
    ax.set_ylabel("digits: |log R - log R(double)|")
    ax = axes[2]
    for i, horizon in enumerate(size["horizons"]):
        tau = horizon * size["digits_dtau"]
        got = [r for r in rows if r["quantity"] == "test_accuracy" and r["tau"] == tau]
        x = np.array([r["seed"] for r in got], float) + 0.15 * (i - 0.5)
        ax.plot(x, [r["difference"] * size["images"] for r in got], "x", color=f"C{2 * i + 1}",
                label=f"mixed, tau = {tau:g}")
        ax.plot(x, [r["floor"] * size["images"] for r in got], "o", mfc="none", color=f"C{2 * i}",
                label=f"other rank count, tau = {tau:g}")
    ax.axhspan(-BAND_IMAGES, BAND_IMAGES, color="0.9", label=f"band +-{BAND_IMAGES} images")
    ax.set_xlabel("seed")
    ax.set_ylabel("test accuracy - double's, in images")
    for ax in (axes[0], axes[2]):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    common.finish_axes(axes)
    common.save_figure(fig, "precision", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

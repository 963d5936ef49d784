#!/usr/bin/env python3
"""Causal masking, [B]'s open case, with a counterexample built for it.
[B]'s injectivity argument needs attention to be permutation-equivariant,
which the causal mask breaks. The data (scripts/make_permutation_pairs.py):
P = 4 pairs of sequences of n = 6 tokens in d = 4, each pair the same
tokens in two orders with the same last token, and targets c +- 0.5.
Without the mask the last token's state, and so the prediction, is the same
for both sequences of a pair: K has two equal rows per pair, and R cannot
fall below the irreducible risk (each pair predicted at its mean), which the
driver computes from the tokens. With the mask token i sees tokens 1..i, the
order changes what the last token attends to from the second slice on, and
the pairs can be fitted.

Pairs: M = 32, L = 4, softmax, the query readout; K_V and K_all at
initialisation (`mft ntk`); 1000 Euler steps of dtau = 0.05 (tau = 50);
seeds 11..20 (the pairs' draw and init.seed; 1..10 were the earlier
run's, now this design's pilot: see Power below), each with and without
the mask on the same data and particles.

Translates: does the mask keep a degenerate family's kernel injective? N = 4
sequences in d = d_h = 2 of Gaussian translates N(a_i e, I), a_i = 0, 1/3,
2/3, 1, e = (1, 1)/sqrt 2 (the injectivity experiment's first design's), each
ending with its query token q_i, a draw from its own law. In the population
limit without the mask the flow of a Gaussian law is affine with one linear
part for every translate, so yhat_i and its gradient in every particle are
linear in (q_i, a_i): the limit kernel has rank d + 1 = 3 < N, one null
direction, and lambda_min(K_V) -> 0 as the sampling error, like 1/n. With
the mask token j's state is that of its prefix x_1..x_j; with i.i.d.
tokens every prefix measure tends to the same population, all but a
vanishing fraction of the tokens are late, and the masked limit kernel is
the unmasked one: the mask cannot keep it injective, and lambda_min falls
with n too. Nested samples with common random numbers: per seed one draw of
2048 tokens per sequence, the last its query q_i; the sequence at n is the
draw's first n - 1 tokens and q_i (a data file named after its content), so
a seed's curve lambda_min(n) is one sample growing, and the masked and
unmasked curves of a seed share its tokens and particles (init.seed).
M = 64, L = 4, n = 16, 32, .., 2048, seeds 11..20; K_V only.

The fit: per seed and mask, the slope of log lambda_min(K_V) on log n over
n >= 128 (five n; the asymptote's -1 is not asked, only the fall); its
interval is the 95 % Student-t interval over the ten seeds' slopes (9 dof),
and the mask's effect is the paired difference of a seed's two slopes
(stats.paired, 9 dof).

Sanity checks (identities of permutation equivariance, which must hold for
the pairs to test the mask at all; every seed):
  a. the unmasked pair run ends at the irreducible risk within 1 %;
  b. the unmasked pairs' kernel is singular to rounding,
     |lambda_min(K_V)| < 1e-12 lambda_max.
Criteria, stated before the runs (1-2 every seed):
  1. the masked pairs' kernel is injective, lambda_min(K_V) > 1e-8;
  2. the masked pair run's final R is below 1e-6 of the unmasked plateau;
  3. the mask does not keep the translates' kernel injective: the masked
     slope's interval lies below 0;
  4. the control, [B]'s degeneracy without the mask: the unmasked slope's
     interval lies below 0;
  5. the mask does not change the rate, an equivalence test: the paired
     difference masked - unmasked of the slopes has its interval inside
     [-0.25, 0.25] (a quarter of the 1/n rate; a wide interval fails as
     surely as a far mean).
Each can fail: (1) if the mask leaves a pair's rows equal (the causal
prefixes of a pair's last token carry the same measure); (2) if a masked
run stalls; (3, 4) if a slope is 0 or positive within the seed spread (a
kernel at its limit, or seeds scattering); (5) if the mask makes the kernel
fall slower or faster, or the seeds cannot resolve a quarter of the rate.

Power (stats.Plan, from the earlier run's seeds 1..10, this design's pilot
and excluded from its verdicts): the paired slope differences spread
0.0276 over 10 seeds, so 10 new seeds give a half-width of 0.020 against the
band 0.25 of criterion 5; the slopes themselves spread 0.452 (masked) and
0.445 (unmasked) around -0.58 and -0.60, so 10 seeds give half-widths of
0.32 against the 0.58 that separates the pilot's mean from 0 (criteria 3,
4: a slope at the pilot's would be resolved; one near 0 would not be
mistaken for a fall).

Relabelled after the earlier results: its criteria 1 and the unmasked half
of 2 are the sanity checks a and b (they follow from equivariance; they
held to 2e-16); the masked half of 2 is criterion 1.

What was seen before these were stated: the earlier design's full results
(three seeds; pairs: unmasked R at the irreducible 0.125 to 1e-16, masked
lambda_min(K_V) 1.7e-3..8.9e-3 against unmasked -1.2e-15..-4.4e-16 of
lambda_max 6.8..12.5, masked R 2.2e-13..1.1e-9; translates redrawn at each
n by mft's families task, the query the last draw: masked slope over
n = 128..1024 -0.538 +- 0.379 pooled, the masked curve on the unmasked one
at every n by eye). The margin of criterion 5 and the window n >= 128 were written
down before a pilot of this design at seed 1 (timing; the pairs at full
size and the translates at n = 16..2048, both masks): pairs as before
(unmasked R 0.125 against 0.125, |lambda_min|/lambda_max 2e-18; masked
lambda_min(K_V) 8.9e-3, R 2.2e-13); the translates' lambda_min(K_V)
unmasked 0.131, 0.023, 0.042, 0.056, 0.038, 0.022, 0.0086, 0.0066 at
n = 16..2048 (lambda_max 3.1..4.3), masked within 7 % of these at every
n, slopes -0.83 (unmasked) and -0.84 (masked) over n = 128..2048; one
kernel at n = 2048 took 28 s of a core and 4.1 GiB (n = 4096 would take
16 GiB, too much for two at once on the development machine).

  python3 scripts/experiments/causal.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft ntk` runs): 60 pair runs and 160 kernels of the
translates, 13 CPU minutes at the pilot's rate (per seed 2.5 s for the
pairs, 74 s for the translates, 56 s of it at n = 2048): about 7 minutes
on 2 cores, twice that on cores shared with another sweep. Writes
causal.csv (one row per pair run: mask, seed, the kernels' extreme
eigenvalues, R at the start and end, the irreducible risk; one row per
translates kernel: mask, n, seed, K_V's extreme eigenvalues; every row its
runs' mft version and creation time) and exp_causal.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import sys
from pathlib import Path

import numpy as np

import common
import stats
from common import Run

sys.path.insert(0, str(common.SCRIPTS))
from make_permutation_pairs import irreducible_risk, permutation_pairs  # noqa: E402

SEEDS = list(range(11, 21))  # 1..10: the pilot (the earlier design's run)
FULL = dict(seeds=SEEDS, pairs=4, n=6, d=4, gap=0.5, M=32, L=4, steps=1000, dtau=0.05,
            sweep=dict(seeds=SEEDS, M=64, L=4, tokens=[16, 32, 64, 128, 256, 512, 1024, 2048], fit_from=128))
QUICK = dict(seeds=[1, 2], pairs=2, n=4, d=2, gap=0.5, M=4, L=2, steps=20, dtau=0.05,
             sweep=dict(seeds=[1, 2], M=4, L=2, tokens=[8, 16, 32, 64], fit_from=16))
D = 2
SHIFTS = np.linspace(0.0, 1.0, 4)  # a_i, one per sequence
E = np.ones(D) / np.sqrt(D)
STREAM = 9  # the translates' draws: a stream of their own beside the pairs' (default_rng(seed))
GAP, ROUNDING = 0.01, 1e-12  # sanity checks a, b
INJECTIVE, RISK_RATIO = 1e-8, 1e-6  # criteria 1, 2
MARGIN = 0.25  # criterion 5: the equivalence margin on the slope difference
# The pilot (seeds 1..10 of the earlier design, docs/experiments/causal.csv
# at 6be67c30c0): spread of the paired slope differences, of the masked and
# unmasked slopes, and the distance of the slopes' mean from 0.
PILOT = dict(seeds=10, difference_spread=0.0275605, masked_spread=0.452051, unmasked_spread=0.444716,
             slope_distance=0.58)
MASKS = ("false", "true")
COLUMNS = ["kind", "causal", "n", "seed", "V_min", "V_max", "all_min", "all_max", "risk_start", "risk_end",
           "irreducible"]


def label(mask):
    return "causal" if mask == "true" else "no mask"


def color(mask):
    return "C1" if mask == "true" else "C0"


def pair_runs(size, folder):
    runs, data = [], {}
    for seed in size["seeds"]:
        data[seed] = permutation_pairs(size["pairs"], size["n"], size["d"], size["gap"], seed)
        path = common.data_file(folder, f"pairs-s{seed}", *data[seed])
        for mask in MASKS:
            base = {"data.task": "file", "data.file": str(path), "model.heads": size["M"], "model.slices": size["L"],
                    "model.causal": mask, "init.seed": seed}
            tag = f"pairs-{'causal' if mask == 'true' else 'all'}-s{seed}"
            for part in ("V", "all"):
                runs.append(Run(f"{tag}-ntk{part}", {**base, "ntk.part": part}, command="ntk"))
            runs.append(Run(f"{tag}-train", {**base, "train.steps": size["steps"], "train.dtau": size["dtau"],
                                             "output.history_every": 10, "output.snapshot_every": size["steps"]}))
    return runs, data


def translates_files(seed, sweep, folder):
    """{n: data file}: the first n - 1 tokens of one draw per sequence, then
    its query q_i (the draw's last token). The targets are zero: the kernel
    does not depend on them."""
    rng = np.random.default_rng([STREAM, seed])
    draw = SHIFTS[:, None, None] * E + rng.normal(size=(SHIFTS.size, max(sweep["tokens"]), D))
    targets = np.zeros((SHIFTS.size, 1))
    return {n: common.data_file(folder, f"translates-s{seed}-n{n}",
                                np.concatenate([draw[:, :n - 1], draw[:, -1:]], axis=1), targets)
            for n in sweep["tokens"]}


def translates_runs(sweep, folder):
    """K_V of the translates at every n, seed and mask (one data file for both masks)."""
    runs = []
    for seed in sweep["seeds"]:
        for n, path in translates_files(seed, sweep, folder).items():
            args = {"data.task": "file", "data.file": str(path), "model.head_dim": D, "model.heads": sweep["M"],
                    "model.slices": sweep["L"], "init.seed": seed, "ntk.part": "V"}
            for mask in MASKS:
                runs.append(Run(f"translates-{mask}-s{seed}-n{n}", {**args, "model.causal": mask}, command="ntk"))
    return runs


def kernel(path, part):
    import h5py
    with h5py.File(path, "r") as f:
        return {f"{part}_min": float(f["ntk"].attrs["lambda_min"]), f"{part}_max": float(f["ntk"].attrs["lambda_max"])}


def read_rows(size, data, paths):
    rows, curves = [], {}
    for seed in size["seeds"]:
        floor = irreducible_risk(*data[seed])
        for mask in MASKS:
            tag = f"pairs-{'causal' if mask == 'true' else 'all'}-s{seed}"
            row = {"kind": "pairs", "causal": mask, "n": size["n"], "seed": seed, "irreducible": floor,
                   **kernel(paths[f"{tag}-ntkV"], "V"), **kernel(paths[f"{tag}-ntkall"], "all"),
                   "risk_start": np.nan, "risk_end": np.nan,
                   "runs": [paths[f"{tag}-ntk{part}"] for part in ("V", "all")]}
            if f"{tag}-train" in paths:  # a diverged run is counted by its NaN: sanity a and criterion 2 fail on it
                h, _ = common.history(paths[f"{tag}-train"])
                row["risk_start"], row["risk_end"] = float(h["risk"][0]), float(h["risk"][-1])
                row["runs"].append(paths[f"{tag}-train"])
                curves[(mask, seed)] = h
            rows.append(row)
    sweep = size["sweep"]
    for mask in MASKS:
        for seed in sweep["seeds"]:
            for n in sweep["tokens"]:
                run = paths[f"translates-{mask}-s{seed}-n{n}"]
                rows.append({"kind": "translates", "causal": mask, "n": n, "seed": seed, **kernel(run, "V"),
                             "all_min": np.nan, "all_max": np.nan, "risk_start": np.nan, "risk_end": np.nan,
                             "irreducible": np.nan, "runs": [run]})
    return rows, curves


def curve(rows, mask, sweep, ns=None):
    """lambda_min(K_V) of the translates: one row per seed, one column per n."""
    ns = ns or sweep["tokens"]
    at = {(r["seed"], r["n"]): r["V_min"] for r in rows if r["kind"] == "translates" and r["causal"] == mask}
    return np.array([[at[(s, n)] for n in ns] for s in sweep["seeds"]])


def slopes(rows, sweep):
    """{mask: per-seed fit of log lambda_min on log n over n >= fit_from, or
    the reason there is none}."""
    ns = [n for n in sweep["tokens"] if n >= sweep["fit_from"]]
    out = {}
    for mask in MASKS:
        Y = curve(rows, mask, sweep, ns)
        out[mask] = stats.per_seed_slopes(ns, Y) if np.all(Y > 0) else f"no fit: {np.sum(Y <= 0)} lambda_min <= 0"
    return out


def seed_text(values, digits=3):
    return ", ".join(f"{v:.{digits}g}" for v in values)


def criteria(rows, fits, size):
    pairs = {(r["causal"], r["seed"]): r for r in rows if r["kind"] == "pairs"}
    seeds, sweep = size["seeds"], size["sweep"]
    free, masked = [pairs[("false", s)] for s in seeds], [pairs[("true", s)] for s in seeds]
    gaps = [abs(r["risk_end"] / r["irreducible"] - 1) for r in free]
    ratios = [m["risk_end"] / f["risk_end"] for m, f in zip(masked, free)]
    rounding = [abs(r["V_min"]) / r["V_max"] for r in free]
    n = len(sweep["seeds"])
    lines = [
        stats.Plan("the paired slope difference, masked - unmasked", MARGIN, PILOT["difference_spread"],
                   PILOT["seeds"], n).line(),
        stats.Plan("the masked slope below 0", PILOT["slope_distance"], PILOT["masked_spread"], PILOT["seeds"],
                   n).line(),
        stats.Plan("the unmasked slope below 0", PILOT["slope_distance"], PILOT["unmasked_spread"], PILOT["seeds"],
                   n).line(),
        common.sanity(f"unmasked R ends at the irreducible risk within {100 * GAP:g} % (every seed)",
                      all(g < GAP for g in gaps),
                      "; ".join(f"seed {r['seed']}: R {r['risk_end']:.6g} against {r['irreducible']:.6g} "
                                f"(gap {g:.1e})" for r, g in zip(free, gaps))),
        common.sanity(f"the unmasked kernel is singular to rounding, |lambda_min(K_V)| < {ROUNDING:g} lambda_max "
                      "(every seed)", all(x < ROUNDING for x in rounding),
                      f"unmasked |lambda_min|/lambda_max, seeds {seeds[0]}..{seeds[-1]}: {seed_text(rounding, 2)}"),
        common.criterion(f"the mask keeps the pairs' kernel injective: masked lambda_min(K_V) > {INJECTIVE:g} "
                         "(every seed)", all(r["V_min"] > INJECTIVE for r in masked),
                         f"masked lambda_min, seeds {seeds[0]}..{seeds[-1]}: {seed_text([r['V_min'] for r in masked])}"),
        common.criterion(f"masked final R below {RISK_RATIO:g} of the unmasked plateau (every seed)",
                         all(x < RISK_RATIO for x in ratios),
                         f"R_masked / R_unmasked, seeds {seeds[0]}..{seeds[-1]}: {seed_text(ratios, 2)}"),
    ]
    window = f"n = {sweep['fit_from']}..{sweep['tokens'][-1]}, {len(sweep['seeds'])} seeds"
    for mask, what in (("true", "the mask does not keep the translates' kernel injective: masked"),
                       ("false", "the control, [B]'s degeneracy: unmasked")):
        fit = fits[mask]
        ok = not isinstance(fit, str) and fit["slope"].below(0.0)
        numbers = fit if isinstance(fit, str) else \
            f"slope {fit['slope'].text()}; per seed {seed_text(fit.estimates[:, 1])} ({window})"
        lines.append(common.criterion(f"{what} slope of log lambda_min(K_V) on log n below 0", ok, numbers))
    if any(isinstance(fits[m], str) for m in MASKS):
        ok, numbers = False, "no paired difference: a slope is missing"
    else:
        diff = stats.paired(fits["true"].estimates[:, 1], fits["false"].estimates[:, 1])
        ok, numbers = diff.low > -MARGIN and diff.high < MARGIN, f"masked - unmasked {diff.text()} ({window})"
    lines.append(common.criterion(f"the mask does not change the rate: paired slope difference inside "
                                  f"[-{MARGIN}, {MARGIN}]", ok, numbers))
    return lines


def plot(rows, curves, fits, size, options):
    """The pairs' risk (sanity a, criterion 2), the per-seed numbers of a, b, 1, 2
    compare with their thresholds, the translates' curves, and the slopes
    with their intervals (3-5)."""
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 3, figsize=(14, 7.6))
    ax = axes[0, 0]
    for (mask, seed), h in sorted(curves.items()):
        ax.semilogy(h["tau"], h["risk"], ls="-" if mask == "true" else "--", lw=0.8, color=color(mask),
                    label=label(mask) if seed == size["seeds"][0] else None)
    pairs = [r for r in rows if r["kind"] == "pairs"]
    ax.axhline(np.mean([r["irreducible"] for r in pairs]), color="k", ls=":", lw=1, label="irreducible risk (mean)")
    ax.set_xlabel("τ")
    ax.set_ylabel("risk R (permutation pairs)")
    ax.set_title("sanity a, criterion 2: the pairs' training", fontsize=9)
    ax = axes[0, 1]
    seeds = np.array(size["seeds"])
    at = {(r["causal"], r["seed"]): r for r in pairs}
    ax.semilogy(seeds, [at[("true", s)]["V_min"] for s in seeds], "o", color=color("true"), label="causal λ_min(K_V)")
    ax.semilogy(seeds, [max(abs(at[("false", s)]["V_min"]), 1e-20) for s in seeds], "x", color=color("false"),
                label="no mask |λ_min(K_V)|")
    ax.semilogy(seeds, [ROUNDING * at[("false", s)]["V_max"] for s in seeds], "_", ms=12, color=color("false"),
                label=f"no mask: {ROUNDING:g} λ_max (rounding)")
    ax.axhline(INJECTIVE, color=color("true"), ls=":", lw=1, label=f"injective: {INJECTIVE:g}")
    ax.set_xticks(seeds)
    ax.set_xlabel("seed")
    ax.set_ylabel("λ_min(K_V) (pairs)")
    ax.set_title("sanity b, criterion 1: every seed", fontsize=9)
    ax = axes[0, 2]
    ax.semilogy(seeds, [abs(at[("false", s)]["risk_end"] / at[("false", s)]["irreducible"] - 1) + 1e-17
                        for s in seeds], "x", color=color("false"), label="no mask: |R / irreducible - 1| (+1e-17)")
    ax.axhline(GAP, color=color("false"), ls=":", lw=1, label=f"sanity a: {GAP:g}")
    ax.semilogy(seeds, [at[("true", s)]["risk_end"] / at[("false", s)]["risk_end"] for s in seeds], "o",
                color=color("true"), label="R causal / R no mask")
    ax.axhline(RISK_RATIO, color=color("true"), ls=":", lw=1, label=f"criterion 2: {RISK_RATIO:g}")
    ax.set_xticks(seeds)
    ax.set_xlabel("seed")
    ax.set_ylabel(f"at τ = {size['steps'] * size['dtau']:g} (pairs)")
    ax.set_title("sanity a, criterion 2: every seed", fontsize=9)
    sweep = size["sweep"]
    ns = np.array(sweep["tokens"], float)
    for k, mask in enumerate(("true", "false")):
        ax, Y = axes[1, k], curve(rows, mask, sweep)
        for y in Y:
            ax.loglog(ns, np.maximum(y, 1e-18), "-", color="0.8", lw=0.7)
        mean = [stats.t_interval(np.log(np.maximum(Y[:, j], 1e-300))) for j in range(ns.size)]
        ax.errorbar(ns, np.exp([m.value for m in mean]), yerr=[np.exp([m.value for m in mean])
                    - np.exp([m.low for m in mean]), np.exp([m.high for m in mean]) - np.exp([m.value for m in mean])],
                    fmt="o", ms=3, capsize=2, color=color(mask), label="geometric mean over seeds, 95 % t")
        fit = fits[mask]
        if not isinstance(fit, str):
            top = ns[ns >= sweep["fit_from"]]
            line = np.exp(fit["log_prefactor"].value) * top ** fit["slope"].value
            ax.loglog(top, line, "k--", lw=1, label=f"slope {fit['slope'].text()}")
        ax.axvspan(sweep["fit_from"], ns[-1], color="0.95")
        ax.set_xticks(ns, [str(n) for n in sweep["tokens"]])
        ax.minorticks_off()
        ax.set_xlabel("tokens per sequence n (translates)")
        ax.set_ylabel("λ_min(K_V)")
        ax.set_title(f"criterion {4 if mask == 'false' else 3}: {label(mask)} (grey: each seed's nested sample)",
                     fontsize=9)
    ax = axes[1, 2]
    if not any(isinstance(fits[m], str) for m in MASKS):
        per_seed = {"causal": fits["true"].estimates[:, 1], "no mask": fits["false"].estimates[:, 1]}
        per_seed["causal - no mask"] = per_seed["causal"] - per_seed["no mask"]
        for x, ((name, values), c) in enumerate(zip(per_seed.items(), (color("true"), color("false"), "C2"))):
            iv = stats.t_interval(values)
            ax.plot(x + np.linspace(-0.15, 0.15, values.size), values, ".", color="0.6")
            ax.errorbar([x + 0.3], [iv.value], yerr=[[iv.value - iv.low], [iv.high - iv.value]], fmt="s",
                        color=c, capsize=4, label=f"{name}: {iv.text()}")
        ax.set_xticks(range(3), list(per_seed))
    ax.axhline(0, color="0.4", lw=0.8)
    ax.fill_between([1.6, 2.45], -MARGIN, MARGIN, color="C2", alpha=0.15, label=f"criterion 5: ±{MARGIN}")
    ax.set_ylabel(f"slope of log λ_min on log n, n ≥ {sweep['fit_from']}")
    ax.set_title("criteria 3-5: per-seed slopes (grey) and 95 % t-intervals", fontsize=9)
    fig.suptitle(f"error bars: 95 % Student-t over {len(sweep['seeds'])} seeds (on log λ_min: geometric means)",
                 fontsize=9)
    common.finish_axes(axes.ravel())
    common.save_figure(fig, "causal", options)


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "causal")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("causal" + ("-quick" if options.quick else ""))
    runs, data = pair_runs(size, folder)
    runs += translates_runs(size["sweep"], folder / "data")
    if not options.quick:
        print(f"[causal] {len(runs)} runs; about 7 minutes on 2 cores", flush=True)
    paths = common.execute("causal", runs, options)
    rows, curves = read_rows(size, data, paths)
    common.write_csv("causal", options, COLUMNS, rows)
    fits = slopes(rows, size["sweep"])
    plot(rows, curves, fits, size, options)
    common.write_criteria("causal", options, criteria(rows, fits, size))


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

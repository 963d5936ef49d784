#!/usr/bin/env python3
"""Model size against data, in the in-context regime: how much data does a
width need before it learns in context as it does from online data, rather
than memorising?

Task icl-linear as in icl.py (d = 8, n = 16). Adam (dtau = 0.01, 3000 steps)
on minibatches of 64 drawn from a fixed training set of N sequences,
N in {256, 1024, 4096, 16384, 65536}, against online data (64 fresh
sequences every step: N = infinity). Widths M in {4, 16} at L = 2, seeds
1..5. Every run is measured on the same 512 held-out sequences (streams of
their own, data.test_seed = 3), as its held-out risk over the zero
predictor's.

The design is paired by seed. Seed s draws the particles (init.seed = s)
and the data (data.seed = s + 10): its training sets are the first N
sequences of one stream, so they are nested in N, and its online run draws
fresh sequences from that seed's online streams. The runs of one seed at every
N and online start from the same particles (and M = 4's are the first four
heads of M = 16's) and are judged on the same held-out set, so a size is
compared with online data seed by seed: the log of the held-out risk over
the same seed's online run's, log(R_N / R_online), one value a seed
(stats.paired on the logs), and its 95 % Student-t interval over the seeds
(4 dof with five seeds). On the log, the zero predictor's risk cancels and
"within 5 %" is one band symmetric about 0. A seed whose run diverged drops
out of the pairs it belongs to, and is counted.

Criteria, stated before the runs (95 % Student-t intervals over seeds,
BAND = log 1.05: a factor 1.05, 5 % either way):
  1. at every width the smallest N overfits: the interval of
     log(R_256 / R_online) lies above BAND (held-out risk more than 5 %
     above the same seed's online run's);
  2. at every width the largest N learns like online data, an equivalence
     test: the interval of log(R_65536 / R_online) lies inside
     [-BAND, BAND]; a wide interval fails as surely as a far mean;
  3. the wider model needs more data: log(R_N / R_online) averaged over the
     five N of a seed is larger at M = 16 than at M = 4, paired by seed
     (the seed's data and its first four heads are shared), interval above 0.
Each can fail: (1) if 256 sequences already generalise as well as online
data, or the seeds scatter; (2) if 65536 sequences (three passes in 3000
steps of 64) still fall short of online data by more than 5 %, or the
seeds scatter by more than five seeds can resolve within 5 %; (3) if the
two widths are as far from online data at each N, or M = 4 further.
Between the grid's ends, the smallest N whose interval lies inside the
band (each width's "data needed") is printed, and every N's place against
the band is in the CSV, not judged.

What was seen before these were stated: the earlier design's full results
(three seeds sharing one training set and one online stream, N up to
16384, the largest N judged "within 2 SE or 5 %"): held-out ratios against
online 4.4 and 4.7 times at N = 256, 1.09 and 1.22 times at N = 16384
(M = 4, 16); M = 4's online ratio scattered by 14 % over its seeds, M = 16's
by 4 %. With the grid ending at N = 16384, the equivalence would have
been a test M = 16 could only fail: N = 65536 was added for that reason.
The seeds were given data of their own so that the seed spread holds the
draw of the training set, which overfitting is about. Three timing runs of 100 steps for the cost below (M = 16 at N = 256 and
65536, M = 4 at N = 256; their risks after 100 steps were printed and mean
nothing here): 0.041 and 0.014 s per step on the 2 shared cores, 2.3 GiB
for M = 16 at N = 65536.

  python3 scripts/experiments/size_data.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

60 runs of 3000 steps, about 43 minutes on 2 cores (those seconds per
step, measured while another sweep shared the cores, give the 20 minutes
the earlier design's 30 runs took; R on the 65536 training sequences,
measured at 3 history rows, adds about 2). Writes size_data.csv (M, N
(0: online), seeds, diverged, the held-out ratio's mean over seeds with its
t-interval, the geometric-mean factor R_N / R_online paired by seed with
its t-interval, where that interval lies against the band, the training
set's risk), size_data-criteria.txt and exp_size_data.png (the held-out
ratio against N with the online line, its interval and the band; the
paired factor against N with the band).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import numpy as np

import baselines
import common
import stats
from common import Run

FULL = dict(widths=[4, 16], L=2, sizes=[256, 1024, 4096, 16384, 65536], seeds=[1, 2, 3, 4, 5], steps=3000,
            every=1500, batch=64, held_out=512, dtau=0.01)
QUICK = dict(widths=[2, 4], L=2, sizes=[16, 64], seeds=[1, 2], steps=30, every=10, batch=8, held_out=32,
             dtau=0.01)
ONLINE = 0         # the N of the online runs in the table
DATA_SEED = 10     # data.seed = init.seed + DATA_SEED: each seed its own training sets and online stream
TEST_SEED = 3      # one held-out set for every run
FACTOR = 1.05      # "like online data": R_N / R_online within a factor 1.05 either way
BAND = np.log(FACTOR)
COLUMNS = ["M", "N", "seeds", "diverged", "test_ratio", "test_ratio_low", "test_ratio_high", "to_online",
           "to_online_low", "to_online_high", "against_online", "train_risk"]


def run_name(M, N, seed):
    return f"M{M}-{'online' if N == ONLINE else f'N{N}'}-s{seed}"


def runs_of(size):
    runs = []
    for M in size["widths"]:
        for N in size["sizes"] + [ONLINE]:
            for seed in size["seeds"]:
                # Online, the N sequences only measure R (never trained on).
                data = {"data.online": "true", "data.sequences": size["held_out"]} if N == ONLINE else \
                    {"data.sequences": N}
                runs.append(Run(run_name(M, N, seed), {
                    "data.task": "icl-linear", **data, "data.seed": seed + DATA_SEED,
                    "data.test_sequences": size["held_out"], "data.test_seed": TEST_SEED,
                    "train.method": "adam", "train.batch": size["batch"], "train.dtau": size["dtau"],
                    "train.steps": size["steps"], "output.history_every": size["every"],
                    "output.snapshot_every": size["steps"], "model.heads": M, "model.slices": size["L"],
                    "init.seed": seed, "init.sigma_v": 0.5}))
    return runs


def finals(paths, size, zero):
    """{(M, N, seed): (held-out ratio, training-set risk)} of the runs that
    finished."""
    out = {}
    for M in size["widths"]:
        for N in size["sizes"] + [ONLINE]:
            for seed in size["seeds"]:
                name = run_name(M, N, seed)
                if name in paths:
                    h, _ = common.history(paths[name])
                    out[(M, N, seed)] = (float(h["test_risk"][-1]) / zero, float(h["risk"][-1]))
    return out


def log_pairs(final, M, N, seeds):
    """{seed: (log R_N, log R_online)} over the seeds whose two runs
    finished: the pairs of the comparison with online data."""
    return {s: (np.log(final[(M, N, s)][0]), np.log(final[(M, ONLINE, s)][0])) for s in seeds
            if (M, N, s) in final and (M, ONLINE, s) in final}


def paired_interval(pairs):
    """The t-interval of log(R_N / R_online) paired by seed, or None with
    fewer than two pairs."""
    if len(pairs) < 2:
        return None
    sized, online = zip(*pairs.values())
    return stats.paired(sized, online)


def against_band(interval):
    """Where a paired interval lies against [-BAND, BAND]."""
    if interval is None:
        return "too few pairs"
    if interval.above(BAND):
        return "above"
    if interval.low >= -BAND and interval.high <= BAND:
        return "inside"
    return "below" if interval.below(-BAND) else "undecided"


def factor_text(interval):
    return (f"log ratio {interval.text()}: R_N / R_online x{np.exp(interval.value):.3g} "
            f"[{np.exp(interval.low):.3g}, {np.exp(interval.high):.3g}]")


def table(final, size):
    rows = []
    for M in size["widths"]:
        for N in size["sizes"] + [ONLINE]:
            found = [final[(M, N, s)] for s in size["seeds"] if (M, N, s) in final]
            ratio = stats.t_interval([f[0] for f in found]) if len(found) >= 2 else None
            paired = None if N == ONLINE else paired_interval(log_pairs(final, M, N, size["seeds"]))
            rows.append({
                "M": M, "N": N, "seeds": len(size["seeds"]), "diverged": len(size["seeds"]) - len(found),
                "test_ratio": np.mean([f[0] for f in found]) if found else np.nan,
                "test_ratio_low": ratio.low if ratio else np.nan, "test_ratio_high": ratio.high if ratio else np.nan,
                "to_online": np.exp(paired.value) if paired else np.nan,
                "to_online_low": np.exp(paired.low) if paired else np.nan,
                "to_online_high": np.exp(paired.high) if paired else np.nan,
                "against_online": "online" if N == ONLINE else against_band(paired),
                "train_risk": np.mean([f[1] for f in found]) if found else np.nan,
                "ratio": ratio, "paired": paired})
    return rows


def criteria(final, rows, size):
    lines = []
    smallest, largest = size["sizes"][0], size["sizes"][-1]
    for M in size["widths"]:
        of = {r["N"]: r for r in rows if r["M"] == M}
        small, large = of[smallest]["paired"], of[largest]["paired"]
        lines.append(common.criterion(
            f"M = {M}: N = {smallest} overfits (log(R_N / R_online) paired by seed above log {FACTOR:g})",
            small is not None and small.above(BAND),
            factor_text(small) if small else "fewer than two seeds with both runs"))
        lines.append(common.criterion(
            f"M = {M}: N = {largest} learns like online data (log(R_N / R_online) paired by seed inside "
            f"+-log {FACTOR:g})", against_band(large) == "inside",
            factor_text(large) if large else "fewer than two seeds with both runs"))
    # The data a width needs, compared over the whole grid: per seed, the mean
    # over N of log(R_N / R_online), wide minus narrow.
    narrow, wide = size["widths"][0], size["widths"][-1]
    mean_log = {}
    for M in (narrow, wide):
        per_N = [log_pairs(final, M, N, size["seeds"]) for N in size["sizes"]]
        mean_log[M] = {s: np.mean([p[s][0] - p[s][1] for p in per_N]) for s in size["seeds"]
                       if all(s in p for p in per_N)}
    both = [s for s in size["seeds"] if s in mean_log[narrow] and s in mean_log[wide]]
    text = f"M = {wide} needs more data than M = {narrow} (log(R_N / R_online) averaged over N, wide minus " \
           f"narrow, paired by seed, above 0)"
    if len(both) < 2:
        lines.append(common.criterion(text, False, "fewer than two seeds with every run"))
    else:
        gap = stats.paired([mean_log[wide][s] for s in both], [mean_log[narrow][s] for s in both])
        lines.append(common.criterion(text, gap.above(0.0), gap.text()))
    return lines


def data_needed(rows, M):
    """The smallest N whose paired interval lies inside the band, or None."""
    inside = [r["N"] for r in rows if r["M"] == M and r["N"] != ONLINE and r["against_online"] == "inside"]
    return min(inside) if inside else None


def figure(rows, size, options):
    plt = common.pyplot()
    from matplotlib import ticker
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.2))
    level = f"{100 * stats.LEVEL:g} % t over the seeds"  # dof: seeds - 1, in the CSV's seeds and diverged
    for i, M in enumerate(size["widths"]):
        fixed = [r for r in rows if r["M"] == M and r["N"] != ONLINE]
        online = next(r for r in rows if r["M"] == M and r["N"] == ONLINE)
        N = np.array([r["N"] for r in fixed], float)
        mean = np.array([r["test_ratio"] for r in fixed])
        bars = [mean - [r["test_ratio_low"] for r in fixed], [r["test_ratio_high"] for r in fixed] - mean]
        left.errorbar(N, mean, yerr=bars, marker="o", capsize=3, color=f"C{i}", label=f"M = {M}, fixed N ({level})")
        left.axhline(online["test_ratio"], color=f"C{i}", ls="--", lw=1)
        if online["ratio"] is not None:
            left.axhspan(online["test_ratio_low"], online["test_ratio_high"], color=f"C{i}", alpha=0.2,
                         label=f"M = {M}, online (dashed) and its interval")
        # The band is judged against each seed's own online run; here it is
        # drawn around the online mean, to show its size.
        for edge in (FACTOR, 1 / FACTOR):
            left.axhline(online["test_ratio"] * edge, color=f"C{i}", ls=":", lw=1)
        ok = np.isfinite([r["to_online"] for r in fixed])
        factor = np.array([r["to_online"] for r in fixed])[ok]
        low = np.array([r["to_online_low"] for r in fixed])[ok]
        high = np.array([r["to_online_high"] for r in fixed])[ok]
        shift = 1.06 ** (i - (len(size["widths"]) - 1) / 2)  # the widths side by side
        right.errorbar(N[ok] * shift, factor, yerr=[factor - low, high - factor], marker="o", capsize=3,
                       color=f"C{i}", label=f"M = {M} ({level})")
    left.plot([], [], color="0.3", ls=":", lw=1, label=f"online x/ {FACTOR:g} (the band)")
    left.axhline(1.0, color="k", lw=0.8, label="predict zero")
    left.set_ylim(bottom=0)
    left.set_ylabel("held-out risk / zero-predictor risk")
    left.set_title("mean over seeds", fontsize=9)
    right.axhspan(1 / FACTOR, FACTOR, color="0.6", alpha=0.4, label=f"like online data (x/ {FACTOR:g})")
    right.axhline(1.0, color="k", lw=0.8)
    right.set_yscale("log")
    right.yaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
    right.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    right.yaxis.set_minor_formatter(ticker.NullFormatter())
    right.set_ylabel("R_N / R_online")
    right.set_title("the same seed's online run, paired (geometric mean)", fontsize=9)
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_xlabel(f"training sequences N (L = {size['L']}, {size['steps']} Adam steps of {size['batch']})")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    common.save_figure(fig, "size_data", options)


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs = runs_of(size)
    if not options.from_sweep and not options.slurm:
        print(f"[size_data] {len(runs)} runs of {size['steps']} steps; the full mode takes about 43 minutes on "
              f"2 cores", flush=True)
    paths = common.execute("size_data", runs, options)
    run = common.mft_io.open_run(str(next(iter(paths.values()))))
    zero = baselines.zero_risk(run.test_targets)  # the same held-out set in every run
    run.close()

    final = finals(paths, size, zero)
    rows = table(final, size)
    common.write_csv("size_data", options, COLUMNS, rows)
    for r in rows:
        n = "online" if r["N"] == ONLINE else r["N"]
        paired = "" if r["N"] == ONLINE else \
            f", to online x{r['to_online']:.3g} [{r['to_online_low']:.3g}, {r['to_online_high']:.3g}] " \
            f"({r['against_online']})"
        print(f"M={r['M']:<3} N={n!s:<6} held-out/zero {r['test_ratio']:.4f} "
              f"[{r['test_ratio_low']:.4f}, {r['test_ratio_high']:.4f}]{paired}, training R {r['train_risk']:.3e}")
    for M in size["widths"]:
        print(f"M = {M}: the smallest N like online data: {data_needed(rows, M) or 'none in the grid'}")

    common.write_criteria("size_data", options, criteria(final, rows, size))
    figure(rows, size, options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

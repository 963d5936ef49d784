#!/usr/bin/env python3
"""d and M coupled as [B] means it: [B]'s limit keeps the head dimension d_h
fixed while M grows, and leaves open how M must grow with the token
dimension d. If the distance of the M-head system to its limit is
D = C(d) M^(-1/2), keeping D fixed needs M ~ C(d)^2: how does C grow with d?

Setting: d_h = 4 and d in {8, 16, 32, 64}, the teacher task (4 teacher
heads, N = 32 sequences of n = 16 tokens, L = 4) with the scales normalised
across d: init.sigma_qk = 0.5 sqrt(8/d) and init.sigma_v = sqrt(8/d) for the
student and the teacher (drawn with the student's law), so that the scores
<Q x, K x'>, the values V x, a head's norm and the targets' spread do not
grow with d. Euler steps of dtau = 0.02, seeds 1..5.

Coupling, as in mean_field.py (section 3): per (d, seed) one reference of
M_ref = 512 heads per slice and runs of M in {32, 64, 128, 256} whose
particle m starts equal to the reference's particle m. The coupling
distance D(M) = (1/(M L)) sum_{l, m < M} |theta_lm - theta_lm^ref| (Q, K,
V of a head as one vector) is divided by sqrt(1 - M/M_ref) (the reference
shares the run's particles) and by the mean displacement
|theta^ref(tau) - theta^ref(0)| of the reference's particles:
D/displacement, which does not depend on tau (section 3).

At equal progress, not at equal tau. The risk falls much faster at large
d (at tau = 2 the final risks at d = 64 were 1e-16..1e-27, at d = 8 1e-4),
so at one tau the particles at large d have long stopped moving. Every
(d, seed) is compared at the step k where the risk first falls to 0.01 of
its initial value (R/R_0 = 0.01), read from the run of M = 64 (the clock:
a first round runs it to a horizon of 80, 45, 24, 12 steps at d = 8, 16,
32, 64; a second round runs every width and the reference for exactly k
steps). The clock is not the reference because running the reference
twice would cost half the experiment again; in the pilot below, the step
at which R/R_0 first reached 0.01 differed between the widths 32..512 by at
most 3 of 50..53 steps at d = 8 and not at all (6) at d = 64, and the
reference's own R/R_0 at k is recorded. A (d, seed) whose clock does not
reach R/R_0 = 0.01 within its horizon is left out and named.

Saturated widths, by section 3's rule, computed: a width is saturated at d
when D/displacement (the seed mean) is SATURATED = 1/2 or more, the
distance to the limit half a particle's displacement; a width saturated at
any d is left out of every fit, so that C(d) is compared over one range of
M.

The widths, the horizons and R/R_0 = 0.01 were chosen after a pilot: runs
of M = 32 for seeds 1..5 (R/R_0 = 0.01 first at steps 46..62, 25..29,
11..13, 5..7 at d = 8, 16, 32, 64), and every width for seed 9, not one of
the five. In it, M = 16 against 32 heads gave D/displacement 0.83 at d = 8
and 0.90 at d = 64, so the widths 8..64 of the earlier design were all
saturated; at the compared step, M = 32, 64, 128, 256 against 512 gave
0.63, 0.45, 0.36, 0.24 at d = 8 and 0.65, 0.45, 0.33, 0.24 at d = 64,
while the reference's displacement was 0.36 at d = 8 and 0.11 at d = 64.

Criteria, stated before the runs. Every fit is made seed by seed (the
widths and dimensions of one seed share its draws and its teacher) and its
interval is the Student-t interval over the seeds' fits (5 seeds: 4 dof);
each line states its level and dof:
  1. the width law at every d: the slope of log D/displacement against
     log M over the unsaturated widths has a t-interval containing -1/2 at
     every d (the four intervals at a joint 95 %: 98.75 % each, Bonferroni);
  2. the fall of C(d) found by the earlier design (gamma = -0.53, from D
     at tau = 2, not normalised) survives at equal R/R_0 and in
     displacements: with C(d) = the geometric mean over the unsaturated
     widths of sqrt(M) D/displacement, the slope gamma of log C against
     log d has a 95 % t-interval below 0;
  3. the particles move less at larger d: the slope of log displacement
     (the reference's, up to the compared step) against log d has a 95 %
     t-interval below 0; the unnormalised sqrt(M) D then falls with d by
     that slope more than C(d) does.
Each can fail: (1) if D falls more slowly or faster than M^-1/2 at some d,
(2) if C(d) is flat or grows once D is measured in displacements, (3) if
the displacement to the same relative risk does not fall with d. Also
printed, measured: C(d) and the unnormalised sqrt(M) D at each d with
their intervals, gamma of both, and the growth M ~ d^(2 gamma) that keeps
D/displacement fixed.

  python3 scripts/experiments/d_and_m.py [--quick] [--update-docs] [--jobs J]

Runs locally only (the second round's length is read from the first's
risks): 20 clock runs to the horizon, then 100 runs (widths summing to 992
heads per slice) of 5..62 steps. About 35 minutes on 2 idle cores, two runs
at a time, estimated from per-step times at M = 32 and 512 scaled to the
earlier design's 25 minutes: a head at d = 64 costs about 30 heads at
d = 8 (V is d x d), so the d = 64 runs take nearly half the time though
they run 5..7 steps. On cores shared with other runs about twice that: d = 8
and 16 for seeds 7 and 8, 11 % of the estimated work, took 8.3 minutes
there. About 2 GB of run files, most of them at d = 64.
Writes d_and_m.csv (d, M, seeds; the mean tau and R/R_0 of the compared
step; the means of the displacement, of D/sqrt(1 - M/M_ref) and of
D/displacement with its 95 % t-interval low-high; whether that mean is
saturated) and exp_d_and_m.png (each criterion's quantity with its
t-intervals over seeds).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import numpy as np

import common
import stats
from common import Run
from mean_field import coupling_distance, particles

# fraction: the compared step is the first at which the risk of the clock
# (the run of `clock` heads) is at most this fraction of its initial value;
# horizon: the clock's steps at each d in the first round
FULL = dict(dims=[8, 16, 32, 64], widths=[32, 64, 128, 256], reference=512, clock=64, seeds=[1, 2, 3, 4, 5],
            L=4, N=32, dtau=0.02, fraction=0.01, horizon={8: 80, 16: 45, 32: 24, 64: 12})
QUICK = dict(dims=[4, 8], widths=[64, 128, 256], reference=512, clock=64, seeds=[1, 2, 3], L=2, N=8,
             dtau=0.02, fraction=0.1, horizon={4: 20, 8: 12})
SATURATED = 0.5    # section 3's rule: D/displacement at or above this is saturated
LAW = -0.5         # criterion 1: the width law's power
LEVEL = 0.95       # every criterion's (joint) level
COLUMNS = ["d", "M", "seeds", "tau", "risk_ratio", "displacement", "distance", "relative", "relative_low",
           "relative_high", "saturated"]


def run_name(d, M, seed, steps):
    return f"d{d}-M{M}-s{seed}-k{steps}"


def run(d, M, seed, steps, size):
    """A run of M heads per slice for `steps` Euler steps, with snapshots at
    its first and last step only (the d = 64 particles are large)."""
    scale = np.sqrt(8.0 / d)
    return Run(run_name(d, M, seed, steps), {
        "data.task": "teacher", "data.teacher_heads": 4, "model.d": d, "model.head_dim": 4,
        "data.sequences": size["N"], "init.sigma_qk": float(f"{0.5 * scale:.6g}"),
        "init.sigma_v": float(f"{scale:.6g}"), "model.heads": M, "model.slices": size["L"], "init.seed": seed,
        "train.steps": steps, "train.dtau": size["dtau"], "output.snapshot_every": steps})


def compared_step(path, fraction):
    """The first step at which the run's risk is at most `fraction` of its
    initial value, or None."""
    risk = common.history(path)[0]["risk"]
    below = np.flatnonzero(risk <= fraction * risk[0])
    return int(below[0]) if below.size else None


def simulate(size, options):
    """Both rounds; returns ({(d, seed): {"step": k, "paths": {M: path}}},
    [(d, seed) that did not reach the fraction])."""
    ref = size["reference"]
    pairs = [(d, seed) for d in size["dims"] for seed in size["seeds"]]
    clocks = {(d, seed): run(d, size["clock"], seed, size["horizon"][d], size) for d, seed in pairs}
    found_clock = common.execute("d_and_m", list(clocks.values()), options)
    steps = {pair: compared_step(found_clock[clock.name], size["fraction"]) if clock.name in found_clock else None
             for pair, clock in clocks.items()}
    missed = [pair for pair, k in steps.items() if k is None]
    steps = {pair: k for pair, k in steps.items() if k is not None}
    runs = {(d, seed, M): run(d, M, seed, steps[d, seed], size)
            for (d, seed) in steps for M in size["widths"] + [ref]}
    found = common.execute("d_and_m", list(runs.values()), options)
    compared = {}
    for (d, seed), k in steps.items():
        paths = {M: found.get(runs[d, seed, M].name) for M in size["widths"] + [ref]}
        if all(paths.values()):
            compared[d, seed] = {"step": k, "paths": paths, "clock": found_clock[clocks[d, seed].name]}
        else:
            missed.append((d, seed))
    return compared, missed


def measure(size, compared):
    """{(d, seed): {"tau", "risk_ratio", "displacement", "distance": {M: D
    / sqrt(1 - M/M_ref)}}} at the compared step."""
    ref = size["reference"]
    out = {}
    for (d, seed), c in compared.items():
        start, (end, tau) = particles(c["paths"][ref], 0)[0], particles(c["paths"][ref], -1)
        distance = {}
        for M in size["widths"]:
            assert coupling_distance(particles(c["paths"][M], 0)[0], start) == 0.0, "the coupled runs must start equal"
            distance[M] = coupling_distance(particles(c["paths"][M], -1)[0], end) / np.sqrt(1 - M / ref)
        risk = common.history(c["paths"][ref])[0]["risk"]
        out[d, seed] = {"step": c["step"], "tau": tau, "risk_ratio": float(risk[-1] / risk[0]),
                        "displacement": coupling_distance(end, start), "distance": distance,
                        "runs": {M: [c["clock"], c["paths"][M], c["paths"][ref]] for M in size["widths"]}}
    return out


def table(size, measured):
    rows = []
    for d in size["dims"]:
        seeds = [s for s in size["seeds"] if (d, s) in measured]
        for M in size["widths"]:
            mine = [measured[d, s] for s in seeds]
            relative = np.array([m["distance"][M] / m["displacement"] for m in mine])
            interval = stats.t_interval(relative, LEVEL) if len(mine) > 1 else None
            mean = lambda key: float(np.mean([m[key] for m in mine])) if mine else np.nan
            rows.append({"d": d, "M": M, "seeds": len(mine), "tau": mean("tau"), "risk_ratio": mean("risk_ratio"),
                         "displacement": mean("displacement"),
                         "distance": float(np.mean([m["distance"][M] for m in mine])) if mine else np.nan,
                         "relative": float(relative.mean()) if mine else np.nan,
                         "relative_low": interval.low if interval else np.nan,
                         "relative_high": interval.high if interval else np.nan,
                         "saturated": int(bool(mine) and relative.mean() >= SATURATED),
                         "runs": [p for m in mine for p in m["runs"][M]]})
    return rows


def fits(size, measured, rows):
    """What the criteria test, seed by seed over the seeds with every d:
    {"unsaturated": widths, "seeds": n, "width law": {d: Interval},
    "C", "raw", "moved": {d: Interval of log C, of log sqrt(M) D, of log
    displacement}, "gamma", "gamma raw", "displacement": the slopes'
    Intervals against d}."""
    unsaturated = [M for M in size["widths"] if not any(r["saturated"] for r in rows if r["M"] == M)]
    seeds = [s for s in size["seeds"] if all((d, s) in measured for d in size["dims"])]
    out = {"unsaturated": unsaturated, "seeds": len(seeds)}
    if len(seeds) < 2:
        return out
    dims = np.array(size["dims"], float)
    log_moved = np.log([[measured[d, s]["displacement"] for d in size["dims"]] for s in seeds])  # [seed, d]
    out["moved"] = {d: stats.t_interval(log_moved[:, i], LEVEL) for i, d in enumerate(size["dims"])}
    out["displacement"] = stats.per_seed_slopes(dims, np.exp(log_moved), LEVEL)["slope"]
    if len(unsaturated) < 2:
        return out
    M = np.array(unsaturated, float)
    log_D = np.log([[[measured[d, s]["distance"][m] for m in unsaturated] for d in size["dims"]] for s in seeds])
    log_relative = log_D - log_moved[:, :, None]  # [seed, d, M]
    level = 1 - (1 - LEVEL) / len(dims)  # Bonferroni: the slopes at every d jointly at LEVEL
    out["width law"] = {d: stats.per_seed_slopes(M, np.exp(log_relative[:, i]), level)["slope"]
                        for i, d in enumerate(size["dims"])}
    # log C[seed, d]: the geometric mean over the widths of sqrt(M) D/displacement
    log_C = (log_relative + 0.5 * np.log(M)).mean(axis=2)
    log_raw = (log_D + 0.5 * np.log(M)).mean(axis=2)
    out["C"] = {d: stats.t_interval(log_C[:, i], LEVEL) for i, d in enumerate(size["dims"])}
    out["raw"] = {d: stats.t_interval(log_raw[:, i], LEVEL) for i, d in enumerate(size["dims"])}
    out["gamma"] = stats.per_seed_slopes(dims, np.exp(log_C), LEVEL)["slope"]
    out["gamma raw"] = stats.per_seed_slopes(dims, np.exp(log_raw), LEVEL)["slope"]
    return out


def criteria(size, rows, fitted):
    """The three criterion lines (the module's doc)."""
    at = f"R/R_0 = {size['fraction']:g}"
    widths = ", ".join(map(str, fitted["unsaturated"]))
    saturated = "; ".join(f"M = {r['M']} at d = {r['d']}: {r['relative']:.2f}" for r in rows if r["saturated"])
    none = f"no fit: {fitted['seeds']} seeds with every d, unsaturated M [{widths}] (saturated: {saturated or 'none'})"
    law, gamma, moved = fitted.get("width law"), fitted.get("gamma"), fitted.get("displacement")
    C = ", ".join(f"{np.exp(i.value):.3g} (d = {d})" for d, i in fitted.get("C", {}).items())
    raw = f"; the unnormalised sqrt(M) D: gamma {fitted['gamma raw'].text()}" if gamma else ""
    return [
        common.criterion(
            f"the width law at every d: the per-seed slope of D/displacement against M over the unsaturated widths "
            f"has a t-interval containing {LAW:g} at every d (joint {100 * LEVEL:g} %, Bonferroni)",
            law is not None and all(i.contains(LAW) for i in law.values()),
            f"M = {widths}; " + "; ".join(f"d = {d}: {i.text()}" for d, i in law.items()) if law else none),
        common.criterion(
            f"C(d) = geometric mean over M of sqrt(M) D/displacement at {at} falls with d: the per-seed slope "
            "gamma of log C against log d has a t-interval below 0",
            gamma is not None and gamma.below(0), f"gamma {gamma.text()}; C(d) {C}" if gamma else none),
        common.criterion(
            f"the particles move less at larger d: the per-seed slope of the reference's displacement up to {at} "
            "against d has a t-interval below 0",
            moved is not None and moved.below(0), f"slope {moved.text()}{raw}" if moved else none)]


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "d_and_m", "two rounds (the second's length read from the first's risks)")
    size = QUICK if options.quick else FULL
    compared, missed = simulate(size, options)
    measured = measure(size, compared)
    rows = table(size, measured)
    common.write_csv("d_and_m", options, COLUMNS, rows)
    fitted = fits(size, measured, rows)
    lines = criteria(size, rows, fitted)
    common.write_criteria("d_and_m", options, lines)
    plot(size, rows, fitted, options)
    report(size, measured, fitted, missed)


def geometric(interval):
    """An Interval of a log, as the value and interval of its exponential."""
    return f"{np.exp(interval.value):.3g} [{np.exp(interval.low):.3g}, {np.exp(interval.high):.3g}]"


def report(size, measured, fitted, missed):
    """Beside the criteria: where each d was compared, C(d) and the
    unnormalised sqrt(M) D with their intervals, and the growth of M."""
    if missed:
        print(f"measured: left out (the clock not at R/R_0 = {size['fraction']:g} within its horizon, or a run "
              "diverged): " + ", ".join(f"d = {d} seed {s}" for d, s in missed))
    for d in size["dims"]:
        mine = [measured[d, s] for s in size["seeds"] if (d, s) in measured]
        ratios = [m["risk_ratio"] for m in mine]
        print(f"measured: d = {d}: compared at steps {', '.join(str(m['step']) for m in mine)} (horizon "
              f"{size['horizon'][d]}), the reference's R/R_0 there {min(ratios):.3g}..{max(ratios):.3g}"
              if mine else f"measured: d = {d}: no seed compared")
    if "gamma" not in fitted:
        return
    for key, text in (("C", "C(d) = geometric mean of sqrt(M) D/displacement"), ("raw", "unnormalised sqrt(M) D")):
        print(f"measured: {text}: " + "; ".join(f"d = {d}: {geometric(i)}" for d, i in fitted[key].items())
              + f" ({fitted[key][size['dims'][0]].label()})")
    g = fitted["gamma"]
    print(f"measured: keeping D/displacement fixed needs M ~ d^(2 gamma), 2 gamma = {2 * g.value:.3g} "
          f"[{2 * g.low:.3g}, {2 * g.high:.3g}] ({g.label()}); unnormalised gamma {fitted['gamma raw'].text()}")


def plot(size, rows, fitted, options):
    """One panel a criterion, each with its quantity's t-intervals over seeds."""
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    at = f"R/R_0 = {size['fraction']:g}"
    bars = lambda y, low, high: [y - np.asarray(low), np.asarray(high) - y]

    def geometric_bars(ax, intervals, **style):
        """Intervals of logs, drawn as their exponentials; returns the values."""
        y = np.exp([i.value for i in intervals])
        ax.errorbar(size["dims"], y, yerr=bars(y, np.exp([i.low for i in intervals]),
                                               np.exp([i.high for i in intervals])), ms=4, capsize=3, **style)
        return y

    law = fitted.get("width law", {})
    for k, d in enumerate(size["dims"]):
        mine = [r for r in rows if r["d"] == d and r["seeds"]]
        M, y = np.array([r["M"] for r in mine], float), np.array([r["relative"] for r in mine])
        axes[0].errorbar(M, y, yerr=bars(y, [r["relative_low"] for r in mine], [r["relative_high"] for r in mine]),
                         marker="o", ms=4, capsize=2, color=f"C{k}",
                         label=f"d = {d}" + (f": slope {law[d].text(2)}" if d in law else ""))
        saturated = np.array([r["saturated"] == 1 for r in mine], bool)
        axes[0].plot(M[saturated], y[saturated], "o", ms=9, mfc="none", color="k")
    axes[0].axhline(SATURATED, color="C3", ls=":", lw=0.8, label="saturated at or above (section 3; circled)")
    if fitted["unsaturated"]:
        M, last = np.array(size["widths"], float), fitted["unsaturated"][-1]
        anchor = np.mean([r["relative"] for r in rows if r["M"] == last])
        axes[0].plot(M, anchor * (M / last) ** LAW, "k--", lw=0.8, label="M^-1/2")
    axes[0].set_xlabel(f"heads per slice M (M_ref = {size['reference']})")
    axes[0].set_ylabel(f"D/displacement at {at}")
    axes[0].set_title(f"1. the width law (bars: {100 * LEVEL:g} % t over seeds)", fontsize=9)

    if "gamma" in fitted:
        values = [geometric_bars(axes[1], list(fitted[key].values()), fmt=style, label=f"{text}: γ = "
                                 f"{fitted[gamma].text(2)}")
                  for key, gamma, style, text in (("C", "gamma", "o-", "C(d) = √M D/displacement"),
                                                  ("raw", "gamma raw", "s--", "√M D, not normalised"))]
        low, high = min(map(min, values)), max(map(max, values))
        axes[1].set_ylim(low / 2, high * 6)  # room for the legend above the points
    axes[1].set_xlabel("token dimension d (d_h = 4)")
    unsaturated = fitted["unsaturated"]
    axes[1].set_ylabel(f"geometric mean over M = {unsaturated[0]}..{unsaturated[-1]}" if unsaturated else "")
    axes[1].set_title(f"2. C(d) at {at} (bars: {100 * LEVEL:g} % t over seeds)", fontsize=9)

    if "moved" in fitted:
        y = geometric_bars(axes[2], list(fitted["moved"].values()), fmt="o-", color="C2",
                           label=f"slope {fitted['displacement'].text(2)}")
        for d, v in zip(size["dims"], y):
            tau = np.mean([r["tau"] for r in rows if r["d"] == d])
            axes[2].annotate(f"τ = {tau:.2g}", (d, v), textcoords="offset points", xytext=(4, 4), fontsize=7)
    axes[2].set_xlabel("token dimension d")
    axes[2].set_ylabel("displacement of the reference's particles")
    axes[2].set_title(f"3. how far the particles move to {at} (bars: {100 * LEVEL:g} % t)", fontsize=9)
    for ax, where in zip(axes, ("lower left", "upper right", "lower left")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc=where)
    common.save_figure(fig, "d_and_m", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

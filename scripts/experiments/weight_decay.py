#!/usr/bin/env python3
"""Weight decay at stationarity ([A] Thm 4.1), on [A]'s attention + MLP
model: with weight decay lambda the flow minimises Q = R + (lambda/2)|theta|^2,
its stationary point has the risk R* = O(lambda), and the stationary
objective Q* converges as M grows.

Setting: the teacher task (4 teacher heads, N = 32 sequences of n = 16
tokens, the same data for every run), a student with M heads and M MLP
neuron particles (width 4) per slice, L = 2; M in {4, 16, 64}, lambda in
{1e-2, 3e-2, 1e-1} and a lambda = 0 control, seeds 1..6. Euler steps of
dtau = 0.2: the fixed points of the Euler map are exactly the flow's
stationary points, whatever the step, and 0.2 is the step the paths below
were seen with.

Stationarity, measured. A run with lambda > 0 goes to tau = 30/lambda. Its
drift is the drop of Q over the last 3/lambda of the run (a tenth of it);
the fluctuation it is held against is the standard error of Q* over the
seeds in its cell (M, lambda); the run is stationary when its drift is
below half that standard error. A run that went on falling at that rate for
one more window would move its cell's mean by less than half a standard
error, which takes a 95 % t-interval on 5 dof to 94 % coverage. A run not
stationary at 30/lambda (against the standard errors of the 30/lambda
values) is continued once from its end (`mft train --restart`) to
45/lambda and judged there. Q* is Q at the run's end. Q falls along the
flow, so Q* is an upper bound of the value the run's own path would reach.
No exponential is fitted: Q(tau) is not Q* + A exp(-c tau) here (below); it
falls in steps between plateaus, and a fit to one stretch predicts the next
step no better than the last value does. The lambda = 0 control runs to
tau = 200; it shows what the flow reaches without decay (the finite-size
error), against which R* measures lambda's effect.

The design is nested by seed: the runs of a seed at every M and lambda
start from its particles (M = 4's are the first heads of M = 16's, drawn
from streams keyed by seed and particle). So the power of R* in lambda is
fitted seed by seed (stats.per_seed_slopes) and the widths are compared
seed by seed (stats.paired); the cells' means are over the seeds
(stats.t_interval). Every interval is a 95 % Student-t interval over the
seeds (5 dof with six seeds); a seed with a diverged run leaves the fits
that need that run and is counted.

Criteria, stated before the runs:
  1. R* = O(lambda): at every M, the per-seed slope of log R* against
     log lambda over lambda = 1e-2, 3e-2, 1e-1 has its interval's lower end
     at or above 1 - 0.1: R*/lambda grows by less than 10^0.1 = 1.26 as
     lambda falls tenfold. A floor (R* finite as lambda -> 0) or
     R* ~ lambda^p with p < 0.9 fails;
  2. Q* converges in M: at every lambda > 0, paired by seed, the step
     |Q*(4) - Q*(16)| less the next |Q*(16) - Q*(64)| has its interval above
     0: each fourfold width moves Q* less than the one before; or Q* has
     already converged: the paired interval of Q*(16) - Q*(64) lies inside
     +-1 % of Q*(64) (an equivalence test, which a wide interval fails).
     Steps that stay equal or grow by more than that (as the earlier design
     saw at lambda = 0.1) fail.
     Beside it, not judged: per-seed fits Q*(M) = Q_inf + b M^-1/2 (the
     intervals of Q_inf and b) and the ratio of the mean steps (0.5 for a
     correction in M^-1/2, 0.25 for M^-1);
  3. every run with lambda > 0 is stationary by the rule above at its end
     (30/lambda, or 45/lambda where continued);
  4. the controls: every lambda = 0 run ends with R below 1e-3 times the
     mean R* at lambda = 1e-2 at its M (the finite-size error is
     negligible against what weight decay leaves).

What was seen before these were stated: the earlier design's full results
(three seeds, lambda down to 3e-3, runs to 10/lambda): R*/lambda 0.105,
0.305, 0.712 at lambda 1e-2, 3e-2, 1e-1 (M = 64), similar at M = 4 and 16;
Q* falling from M = 4 to 16 to 64 by 10.5 % then 5.3 % at lambda = 1e-2,
8.6 % then 5.1 % at 3e-2, 1.5 % then 5.0 % at 1e-1; Q still falling by
0.3-0.9 % over the last tenth at M = 64; the lambda = 0 controls at R below
1e-32. Then single runs of seed 1 (dtau 0.2, history every 10 steps),
relative drop of Q per tenth of the run over its last five tenths:
M = 4, 16, 64 at lambda = 0.1 to tau = 300 (Q = 0.11120, 0.10870, 0.10390):
8.7e-5..1.2e-5 and 1.5e-3..8.0e-5 falling steadily, and 2.8e-3, 1.6e-3, 1.3e-3,
0.7e-3, 1.6e-3 (not falling steadily); M = 4 at lambda = 0.03 to
tau = 1000: 4.5e-3, 3.6e-3, 3.0e-3, 4.7e-3, 6.7e-3 (a new descent at the
end); M = 4 at lambda = 0.01 to tau = 3000: 1.9e-2, 9.6e-3, 2.3e-3, 9.6e-4,
5.1e-3 (Q = 0.02272); M = 16 at lambda = 0: R = 2.7e-10 at tau = 30, below
1e-31 from tau = 150. At dtau = 0.4 the M = 64, lambda = 0.1 run ended at
the same Q (0.10390) and the M = 4, lambda = 0.01 one 9 % lower (0.02075):
another path between the plateaus, so the step stays 0.2. Timing, 200 steps
at lambda = 0.1: 1.1, 2.0 and 6.0 s of CPU at M = 4, 16, 64 with both cores
busy with other runs. These led to the measured stationarity and the
one-time continuation, and to no exponential extrapolation. Dropped from
the earlier design: lambda = 3e-3 (at 30/lambda its runs alone would cost
twice all the rest) and the control's tau of 3340 (200 is ample); the seeds
go from three to six (5 dof, and a standard error the stationarity rule can
use).

  python3 scripts/experiments/weight_decay.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

Cost: 72 runs; per seed and width 21,500 steps with lambda > 0 and 1,000 of
the control, 405,000 steps in all. At the CPU per step timed above (0.0055,
0.010, 0.030 s at M = 4, 16, 64) that is 51 minutes on 2 cores, and 75 if
every run were continued; at the earlier full run's rate (3.7e5 steps of
the same widths in 1 h 42 min on 2 shared cores) 1 h 53 min, 2 h 47 min if
every run were continued. With --slurm the sweep runs the first 72 runs;
`--from-sweep JOB` continues the runs that need it locally. Writes
weight_decay.csv (per M and lambda: the horizon, seeds, diverged and
continued runs, R*, R*/lambda and Q* with their t-intervals, |theta|^2, the
largest drift, the stationarity threshold and how many runs met it),
weight_decay-criteria.txt and exp_weight_decay.png (R*/lambda against lambda
with its intervals; Q* against M^-1/2 per lambda with its intervals and the
per-seed M^-1/2 fit; every run's drift against its threshold).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import argparse
import math

import numpy as np

import common
import stats
from common import Run

FULL = dict(lambdas=[0.0, 1e-2, 3e-2, 1e-1], widths=[4, 16, 64], seeds=[1, 2, 3, 4, 5, 6], L=2, N=32, teacher=4,
            mlp_width=4, dtau=0.2, every=50, control_tau=200.0)
QUICK = dict(lambdas=[0.0, 0.05, 0.15], widths=[2, 4, 8], seeds=[1, 2, 3], L=2, N=8, teacher=2, mlp_width=2,
             dtau=0.5, every=10, control_tau=50.0)
HORIZON = 30.0    # tau = HORIZON / lambda
EXTENDED = 45.0   # a run not stationary at HORIZON / lambda continues once to EXTENDED / lambda
WINDOW = 3.0      # the drift: the drop of Q over the last WINDOW / lambda of a run
SHARE = 0.5       # criterion 3: the drift below SHARE times its cell's standard error of Q*
MARGIN = 0.1      # criterion 1: the slope's lower end at or above 1 - MARGIN
BAND = 0.01       # criterion 2: the last step inside +-BAND Q* of the widest M: converged already
CONTROL = 1e-3    # criterion 4: R of the lambda = 0 runs against R* at the smallest lambda
COLUMNS = ["M", "lambda", "tau", "seeds", "diverged", "extended", "risk", "risk_low", "risk_high", "ratio",
           "ratio_low", "ratio_high", "objective", "objective_low", "objective_high", "norm2", "drift_max",
           "threshold", "stationary"]


def steps_to(tau, size):
    return int(math.ceil(round(tau / size["dtau"] / size["every"], 9))) * size["every"]


def horizon(lam, size, factor=HORIZON):
    return factor / lam if lam > 0 else size["control_tau"]


def run_name(M, lam, seed, tau):
    return f"M{M}-lambda{lam:g}-s{seed}-tau{tau:g}"


def configuration(M, lam, seed, size):
    return {"data.task": "teacher", "data.teacher_heads": size["teacher"], "data.sequences": size["N"],
            "model.heads": M, "model.mlp_particles": M, "model.mlp_width": size["mlp_width"],
            "model.slices": size["L"], "init.seed": seed, "train.lambda": lam, "train.dtau": size["dtau"],
            "output.history_every": size["every"]}


def measure(path, lam):
    """The end of a run: tau, R, Q and (lambda > 0) its drift, the drop of Q
    over the last WINDOW / lambda."""
    h = common.history(path)[0]
    tau, q, risk = (np.asarray(h[k], float) for k in ("tau", "objective", "risk"))
    drift = np.nan
    if lam > 0:
        drift = abs(q[np.searchsorted(tau, tau[-1] - WINDOW / lam)] - q[-1])
    return {"tau": float(tau[-1]), "risk": float(risk[-1]), "objective": float(q[-1]), "drift": float(drift)}


def excess(drift, threshold):
    """The drift over its threshold: below 1 is stationary (a run whose Q
    no longer moves is, even in a cell whose seeds all agree)."""
    if drift == 0 and threshold == 0:
        return 0.0
    return drift / threshold if threshold > 0 else np.inf if threshold == 0 else np.nan


def thresholds(size, results):
    """SHARE times the standard error of Q* over the seeds, per cell with
    lambda > 0 (nan with fewer than two seeds)."""
    out = {}
    for M in size["widths"]:
        for lam in size["lambdas"]:
            q = [results[M, lam, s]["objective"] for s in size["seeds"] if (M, lam, s) in results]
            if lam > 0:
                out[M, lam] = SHARE * np.std(q, ddof=1) / np.sqrt(len(q)) if len(q) > 1 else np.nan
    return out


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    cells = [(M, lam, s) for M in size["widths"] for lam in size["lambdas"] for s in size["seeds"]]
    first = {}
    for M, lam, s in cells:
        steps = steps_to(horizon(lam, size), size)
        first[M, lam, s] = Run(run_name(M, lam, s, horizon(lam, size)), {
            **configuration(M, lam, s, size), "train.steps": steps, "output.snapshot_every": steps})
    if not options.from_sweep and not options.slurm:
        print(f"[weight_decay] {len(first)} runs, {sum(r.args['train.steps'] for r in first.values())} steps; "
              "see the docstring for the expected time", flush=True)
    paths = common.execute("weight_decay", list(first.values()), options)
    results = {k: measure(paths[r.name], k[1]) for k, r in first.items() if r.name in paths}

    # Continue, once, the runs not stationary at HORIZON / lambda.
    limit = thresholds(size, results)
    late = {k: Run(run_name(*k, horizon(k[1], size, EXTENDED)), {
        "restart": str(paths[first[k].name]), **configuration(*k, size),
        "train.steps": steps_to(horizon(k[1], size, EXTENDED), size),
        "output.snapshot_every": steps_to(horizon(k[1], size, EXTENDED), size)})
        for k, v in results.items() if k[1] > 0 and not excess(v["drift"], limit[k[:2]]) < 1}
    if late:
        print(f"[weight_decay] {len(late)} runs not stationary at tau = {HORIZON:g}/lambda: continued to "
              f"{EXTENDED:g}/lambda", flush=True)
        local = argparse.Namespace(**vars(options))
        local.from_sweep = None  # the sweep ran the first runs; these run here
        more = common.execute("weight_decay", list(late.values()), local)
        for k, r in late.items():
            if r.name in more:
                results[k] = measure(more[r.name], k[1])
            else:
                results.pop(k)  # diverged on the way: counted as diverged
    limit = thresholds(size, results)
    for (M, lam, s), v in sorted(results.items()):
        state = ""
        if lam > 0:
            state = (f", drift {v['drift']:.2e} against {limit[M, lam]:.2e}: "
                     f"{'stationary' if excess(v['drift'], limit[M, lam]) < 1 else 'not stationary'}"
                     f"{' (continued)' if (M, lam, s) in late else ''}")
        print(f"run: M = {M}, lambda = {lam:g}, seed {s}: tau {v['tau']:g}, R {v['risk']:.4e}, "
              f"Q {v['objective']:.6e}{state}", flush=True)
    rows, lines, fits = analyse(size, results, late, limit)
    common.write_csv("weight_decay", options, COLUMNS, rows)
    common.write_criteria("weight_decay", options, lines)
    plot(size, rows, results, late, limit, fits, options)


def bounds(iv):
    return (iv.value, iv.low, iv.high) if iv else (np.nan, np.nan, np.nan)


def analyse(size, results, late, limit):
    """The CSV's rows, the criteria lines and the fits the figure draws."""
    seeds, widths = size["seeds"], size["widths"]
    positive = [lam for lam in size["lambdas"] if lam > 0]
    rows = []
    for M in widths:
        for lam in size["lambdas"]:
            found = [results[M, lam, s] for s in seeds if (M, lam, s) in results]
            R = [v["risk"] for v in found]
            Q = [v["objective"] for v in found]
            risk, objective = stats.finite_interval(R), stats.finite_interval(Q)
            ratio = stats.finite_interval(np.divide(R, lam)) if lam > 0 else None
            drifts = [v["drift"] for v in found]
            row = {"M": M, "lambda": lam, "tau": horizon(lam, size), "seeds": len(seeds),
                   "diverged": len(seeds) - len(found), "extended": sum((M, lam, s) in late for s in seeds),
                   "norm2": np.mean(2 * (np.array(Q) - R) / lam) if lam > 0 and found else np.nan,
                   "drift_max": max(drifts) if lam > 0 and found else np.nan,
                   "threshold": limit.get((M, lam), np.nan),
                   "stationary": sum(excess(d, limit[M, lam]) < 1 for d in drifts) if lam > 0 else np.nan}
            for name, iv in (("risk", risk), ("ratio", ratio), ("objective", objective)):
                row[name], row[name + "_low"], row[name + "_high"] = bounds(iv)
            rows.append(row)

    def complete(keys):
        return [s for s in seeds if all((*k, s) in results for k in keys)]

    lines, fits = [], {"slopes": {}, "steps": {}, "limits": {}}
    # 1. The power of R* in lambda, seed by seed, at every M.
    parts, held = [], True
    for M in widths:
        cs = complete([(M, lam) for lam in positive])
        if len(cs) < 2:
            parts.append(f"M = {M}: {len(cs)} complete seeds, no interval")
            held = False
            continue
        slope = stats.per_seed_slopes(positive, [[results[M, lam, s]["risk"] for lam in positive]
                                                 for s in cs])["slope"]
        fits["slopes"][M] = slope
        held &= slope.low >= 1 - MARGIN
        parts.append(f"M = {M}: slope {slope.text()}")
    widest = [r for r in rows if r["M"] == widths[-1] and r["lambda"] > 0]
    lines.append(common.criterion(
        f"R* = O(lambda) at every M: the per-seed slope of log R* against log lambda over lambda = "
        f"{', '.join(f'{lam:g}' for lam in positive)} has its interval's lower end >= {1 - MARGIN:g}", held,
        "; ".join(parts) + f"; R*/lambda at M = {widths[-1]}: "
        + ", ".join(f"{r['ratio']:.3g} (lambda {r['lambda']:g})" for r in widest)))

    # 2. The steps of Q* in M, paired by seed, at every lambda > 0.
    a, b, c = widths[-3:]
    parts, held = [], True
    for lam in positive:
        cs = complete([(M, lam) for M in (a, b, c)])
        if len(cs) < 2:
            parts.append(f"lambda {lam:g}: {len(cs)} complete seeds, no interval")
            held = False
            continue
        Q = np.array([[results[M, lam, s]["objective"] for M in (a, b, c)] for s in cs])
        first, second = np.abs(Q[:, 0] - Q[:, 1]), np.abs(Q[:, 1] - Q[:, 2])
        shrink, last = stats.paired(first, second), stats.paired(Q[:, 1], Q[:, 2])
        law = stats.per_seed_fits([np.ones(3), np.array([a, b, c], float) ** -0.5], Q, ("Q_inf", "b"))
        fits["steps"][lam], fits["limits"][lam] = shrink, law
        top = Q[:, 2].mean()
        flat = -BAND * top < last.low and last.high < BAND * top
        held &= shrink.low > 0 or flat
        parts.append(f"lambda {lam:g}: {shrink.text()}, Q*({b}) - Q*({c}) {last.text()}"
                     f"{' (inside the band)' if flat else ''}, steps {100 * first.mean() / top:.2f} % then "
                     f"{100 * second.mean() / top:.2f} % of Q*({c}) (ratio {second.mean() / first.mean():.2f}); "
                     f"Q_inf {law['Q_inf'].text(4)}, b {law['b'].text()}")
    lines.append(common.criterion(
        f"Q* converges in M at every lambda > 0: paired by seed, |Q*({a}) - Q*({b})| - |Q*({b}) - Q*({c})| has its "
        f"interval above 0, or Q*({b}) - Q*({c}) has its interval inside +-{BAND:g} Q*({c})", held, "; ".join(parts)))

    # 3. Stationarity at each run's end.
    total = len(widths) * len(positive) * len(seeds)
    judged = [(k, excess(v["drift"], limit[k[:2]])) for k, v in results.items() if k[1] > 0]
    still = sum(x < 1 for _, x in judged)
    worst = max(judged, key=lambda j: np.nan_to_num(j[1], nan=np.inf), default=None)
    lines.append(common.criterion(
        f"every run with lambda > 0 is stationary: the drop of Q over its last {WINDOW:g}/lambda below {SHARE:g} "
        f"times its cell's standard error of Q* (at {HORIZON:g}/lambda, or {EXTENDED:g}/lambda where continued)",
        still == total,
        f"{still} of {total} runs ({total - len(judged)} diverged); {len(late)} continued to {EXTENDED:g}/lambda; "
        + (f"largest drift / threshold {worst[1]:.2f} (M = {worst[0][0]}, lambda {worst[0][1]:g}, seed "
           f"{worst[0][2]})" if worst else "no run")))

    # 4. The controls against the smallest lambda's R*.
    smallest = positive[0]
    parts, held = [], True
    for M in widths:
        zero = [results[M, 0.0, s]["risk"] for s in seeds if (M, 0.0, s) in results]
        star = np.mean([results[M, smallest, s]["risk"] for s in seeds if (M, smallest, s) in results] or [np.nan])
        held &= len(zero) == len(seeds) and max(zero) < CONTROL * star
        parts.append(f"M = {M}: largest {max(zero, default=np.nan):.1e} of {len(zero)} against {CONTROL * star:.1e}")
    lines.append(common.criterion(
        f"every lambda = 0 run ends with R below {CONTROL:g} times the mean R* at lambda = {smallest:g} at its M",
        held, "; ".join(parts)))
    return rows, lines, fits


def plot(size, rows, results, late, limit, fits, options):
    plt = common.pyplot()
    widths, seeds = size["widths"], size["seeds"]
    positive = [lam for lam in size["lambdas"] if lam > 0]
    fig = plt.figure(figsize=(14, 5.6))
    grid = fig.add_gridspec(len(positive), 3)
    left, right = fig.add_subplot(grid[:, 0]), fig.add_subplot(grid[:, 2])
    middle = [fig.add_subplot(grid[i, 1]) for i in range(len(positive))]

    def bars(ax, x, sel, key, **style):
        v = np.array([r[key] for r in sel])
        err = np.array([v - [r[key + "_low"] for r in sel], [r[key + "_high"] for r in sel] - v])
        ax.errorbar(x, v, yerr=err, capsize=3, **style)

    for i, M in enumerate(widths):
        sel = [r for r in rows if r["M"] == M and r["lambda"] > 0]
        slope = fits["slopes"].get(M)
        bars(left, np.array(positive) * 1.04 ** (i - 1), sel, "ratio", marker="o", color=f"C{i}",
             label=f"M = {M}" + (f": slope of R* {slope.text(3)}" if slope else ""))
    # The boundary of criterion 1 through the widest M's largest lambda.
    lam = np.array(positive)
    top = [r for r in rows if r["M"] == widths[-1] and r["lambda"] == positive[-1]][0]["ratio"]
    left.plot(lam, top * (lam / lam[-1]) ** -MARGIN, "k:", lw=0.9,
              label=f"criterion 1's boundary: R* ~ lambda^{1 - MARGIN:g}")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel(f"weight decay lambda (run to tau = {HORIZON:g}/lambda)")
    left.set_ylabel("R* / lambda")
    zero = max((results[k]["risk"] for k in results if k[1] == 0), default=np.nan)
    left.set_title(f"criterion 1; the lambda = 0 controls end at R <= {zero:.0e}", fontsize=8)

    x = np.array(widths, float) ** -0.5
    for ax, lam in zip(middle, positive):
        sel = [r for r in rows if r["lambda"] == lam]
        bars(ax, x, sel, "objective", marker="s", color="C0", ls="none", label="Q*")
        law = fits["limits"].get(lam)
        if law:
            c0, c1 = law.estimates.mean(axis=0)
            grid_x = np.linspace(0, x.max(), 30)
            ax.plot(grid_x, c0 + c1 * grid_x, "k--", lw=0.8, label="mean per-seed Q_inf + b M^-1/2")
            q = law["Q_inf"]
            ax.errorbar([0], [q.value], yerr=[[q.value - q.low], [q.high - q.value]], marker="D", color="C3",
                        capsize=3, label="Q_inf")
        shrink = fits["steps"].get(lam)
        ax.set_title(f"lambda = {lam:g}" + (f"; first step less second: {shrink.text(2)}" if shrink else ""),
                     fontsize=7)
        ax.set_xticks(np.concatenate([[0], x]))
        ax.set_xticklabels(["inf"] + [str(M) for M in widths], fontsize=7)
        ax.set_ylabel("Q*", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
    middle[-1].set_xlabel("M (axis in M^-1/2): criterion 2")

    for i, M in enumerate(widths):
        for j, extended in enumerate((False, True)):
            pts = [(k[1] * 1.06 ** (i - 1), excess(v["drift"], limit[k[:2]])) for k, v in results.items()
                   if k[0] == M and k[1] > 0 and ((k in late) == extended)]
            if pts:
                right.plot(*zip(*pts), "o^"[j], ms=4, ls="none", color=f"C{i}",
                           label=f"M = {M}" + (f", continued to {EXTENDED:g}/lambda" if extended else ""))
    right.axhline(1, color="k", ls=":", lw=0.9, label="threshold")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("lambda")
    right.set_ylabel(f"drop of Q over the last {WINDOW:g}/lambda / ({SHARE:g} SE of Q*)")
    right.set_title("criterion 3: every run", fontsize=8)
    fig.suptitle(f"error bars: 95 % Student-t over the seeds ({len(seeds) - 1} dof with all {len(seeds)}); "
                 "R*, Q*: at each run's end", fontsize=9)
    common.finish_axes([left, right], legend_size=6)
    for ax in middle:
        ax.grid(alpha=0.3)
    middle[0].legend(fontsize=6)
    common.save_figure(fig, "weight_decay", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

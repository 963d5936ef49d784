#!/usr/bin/env python3
"""Weight decay at stationarity ([A] Thm 4.1), on [A]'s attention + MLP
model: with weight decay lambda the flow minimises Q = R + (lambda/2)|theta|^2,
its stationary point has the risk R* = O(lambda), and the stationary
objective Q* converges as M grows.

Setting: the teacher task (4 teacher heads, N = 32 sequences of n = 16
tokens, the same data for every run), a student with M heads and M MLP
neuron particles (width 4) per slice, L = 2; M in {4, 16, 64} at lambda in
{1e-2, 3e-2, 1e-1} and a lambda = 0 control, and M = 256 at lambda = 0.1
only; seeds 7..12 (1..6 were the earlier run's, now this design's pilot:
see Power). Euler steps of dtau = 0.2: the fixed points of the Euler map are
exactly the flow's stationary points, whatever the step, and 0.2 is the
step the paths below were seen with.

Why M = 256, and only at lambda = 0.1: at M <= 64 the steps of Q* in M did
not shrink (below), so whether Q* converges needs a wider M. A step at
M = 256 costs 0.118 s of CPU (below), 3.9 times M = 64's: at lambda = 0.01
(15,000 steps) one seed would cost 30 CPU minutes, as much as 2.6 seeds of
every M <= 64 run at that lambda; at lambda = 0.03 six seeds would cost
59 CPU minutes, and the pilot's spread of the steps there (0.00155) would
need 7 seeds to resolve an M^-1/2 law (below). lambda = 0.1 is the cheapest
(1,500 steps), and the one where the earlier run saw the step grow (2.8 %
of Q*(64) from 4 to 16, 4.9 % from 16 to 64): where M <= 64 says least.
M = 256 runs no control (the controls of M <= 64 already end at R <= 1e-20).

Stationarity, measured. A run with lambda > 0 goes to tau = 30/lambda. Its
drift is the drop of Q over the last 3/lambda of the run (a tenth of it);
the fluctuation it is held against is the standard error of Q* over the
seeds in its cell (M, lambda); the run is stationary when its drift is
below half that standard error. A run that went on falling at that rate for
one more window would move its cell's mean by less than half a standard
error, which takes a 95 % t-interval on 5 dof to 94 % coverage. A run not
stationary at 30/lambda (against the standard errors of the 30/lambda
values) is continued from its end (`mft train --restart`) to 45/lambda,
and one still not stationary there (against the cells' values then) to
60/lambda, where it is judged (the earlier run continued 15 runs once and
two missed the rule by 1.27 and 1.48 times: a second continuation costs
little). Q* is Q at the run's end. Q falls along the flow, so Q* is an
upper bound of the value the run's own path would reach. No exponential is
fitted: Q(tau) falls in steps between plateaus, and a fit to one stretch
predicts the next step no better than the last value does. The lambda = 0
control runs to tau = 200; it shows what the flow reaches without decay
(the finite-size error), against which R* measures lambda's effect.

The design is nested by seed: the runs of a seed at every M and lambda
start from its particles (M = 64's are the first heads of M = 256's, drawn
from streams keyed by seed and particle). So the power of R* in lambda is
fitted seed by seed (stats.per_seed_slopes) and the widths are compared
seed by seed (stats.paired); the cells' means are over the seeds
(stats.t_interval). Every interval is a 95 % Student-t interval over the
seeds (5 dof with six seeds); a seed with a diverged run leaves the fits
that need that run and is counted.

Criteria, stated before the runs (claims of the theory; each can fail):
  1. R* = O(lambda): at every M <= 64, the per-seed slope of log R* against
     log lambda over lambda = 1e-2, 3e-2, 1e-1 has its interval's lower end
     at or above 1 - 0.1: R*/lambda grows by less than 10^0.1 = 1.26 as
     lambda falls tenfold. Fails with a floor (R* finite as lambda -> 0) or
     R* ~ lambda^p with p < 0.9; holds with the pilot's p near 1.85;
  2. Q* converges in M at lambda = 0.1: paired by seed, the step
     |Q*(16) - Q*(64)| less the next |Q*(64) - Q*(256)| has its interval
     above 0 (the fourfold width moves Q* less than the one before), or Q*
     has already converged: the paired interval of Q*(64) - Q*(256) lies
     inside +-1 % of Q*(256) (an equivalence test, which a wide interval
     fails). Fails when the step from 64 to 256 is as large as the one from
     16 to 64 or larger (as 4 -> 16 -> 64 was in the pilot at 0.1) and
     outside the band; holds with a correction in M^-1/2 (the step halves)
     or faster.
     Beside it, not judged: per-seed fits Q*(M) = Q_inf + b M^-1/2 over
     M = 16, 64, 256, the ratio of the mean steps (0.5 for M^-1/2, 0.25 for
     M^-1), and at lambda = 0.01, 0.03 the steps 4 -> 16 -> 64 and their fit.
Sanity checks (of the design: they must hold for R* and Q* to mean what
the theory's do; a failure is a broken design, not a finding):
  a. every run with lambda > 0 is stationary by the rule above at its end
     (30/lambda, or 45/lambda or 60/lambda where continued). Fails for a run
     still descending at 60/lambda (a new step between plateaus);
  b. the controls: every lambda = 0 run ends with R below 1e-3 times the
     mean R* at lambda = 1e-2 at its M (the finite-size error is negligible
     against what weight decay leaves). Fails for a control stuck on a
     plateau.

Power (stats.Plan; the pilot is the earlier run's seeds 1..6,
docs/experiments/weight_decay-criteria.txt of 86c77a6, excluded from the
verdicts; spreads recovered from its 95 % t-intervals on 5 dof, whose
three digits make them good to about 1 %):
  - criterion 1, a bound: the pilot's slopes lie 0.94 above 0.9 (1.84 at
    M = 4 and 64) and spread 0.057 at most (M = 4): 6 seeds give 0.060;
  - criterion 2's shrinking step, a bound at 0: a Q* ~ M^-1/2 law from the
    pilot's Q*(16) - Q*(64) = 0.00512 at lambda = 0.1 halves it, a
    difference of 0.00256; the pilot's paired step difference (4 -> 16
    less 16 -> 64) spread 0.00092, an upper estimate of the one at
    16/64/256 (the seeds' spread of Q* falls with M: 0.00056, 0.00032,
    0.00024 at M = 4, 16, 64): 6 seeds give 0.00097;
  - criterion 2's equivalence: the band 1 % of Q*(256), at least 0.00102
    (1 % of the pilot's Q_inf, 0.1022); the pilot's paired Q*(16) - Q*(64)
    spread 0.00040, again an upper estimate for 64 - 256: 6 seeds give
    0.00042.

Relabelled from the earlier design: its criteria 3 (stationarity) and 4
(the controls) are the sanity checks a and b; its criterion 2 (steps
4 -> 16 -> 64 at every lambda) is reported, not judged (the pilot's spreads
give half-widths of 0.00089 and 0.00163 against M^-1/2 differences of
0.00085 and 0.00164 at lambda = 0.01, 0.03: even odds of resolving them).

What was seen before these were stated: the earlier run (criteria of
be2fc9a and d01a05a, run from 3842f20: seeds 1..6, M = 4, 16, 64, the
same lambdas, continued once), its verdicts as written:
  1. R* = O(lambda) holds: slopes 1.84 [1.78, 1.9], 1.87 [1.85, 1.9],
     1.84 [1.83, 1.85] at M = 4, 16, 64 (95 % t, 5 dof); R*/lambda at
     M = 64 0.102, 0.297, 0.702 at lambda 0.01, 0.03, 0.1;
  2. Q* converges in M fails: |Q*(4) - Q*(16)| - |Q*(16) - Q*(64)|
     0.000443 [-0.000441, 0.00133], 0.000216 [-0.00141, 0.00184],
     -0.00221 [-0.00318, -0.00125] at lambda 0.01, 0.03, 0.1; Q*(16) -
     Q*(64) 0.00126 [0.000891, 0.00163], 0.00307 [0.00209, 0.00404],
     0.00512 [0.0047, 0.00554]; steps 8.89 % then 6.57 %, 6.47 % then
     6.04 %, 2.80 % then 4.94 % of Q*(64); Q_inf 0.01829 [0.01795,
     0.01864], 0.04911 [0.0486, 0.04963], 0.1022 [0.1017, 0.1027];
  3. every run stationary fails: 52 of 54 runs (0 diverged), 15 continued
     to 45/lambda, largest drift / threshold 1.48 (M = 64, lambda 0.03,
     seed 1);
  4. the controls hold: largest R 1.5e-20, 1.3e-31, 8.7e-33 at M = 4, 16,
     64 against 1.3e-06, 1.0e-06, 1.0e-06.
Before it, the first design (three seeds, lambda down to 3e-3, runs to
10/lambda; its verdicts: R* <= C lambda holds, Q* converges fails,
stationary fails with 2 of 36 runs changing Q by under 1e-3): R*/lambda 0.105, 0.305, 0.712 at lambda 1e-2, 3e-2, 1e-1
(M = 64); Q* falling from M = 4 to 16 to 64 by 10.5 % then 5.3 % at
lambda = 1e-2, 8.6 % then 5.1 % at 3e-2, 1.5 % then 5.0 % at 1e-1. Single
runs of seed 1 showed Q falling in steps between plateaus (relative drops
per tenth of the run not falling steadily, a new descent at the end of
M = 4, lambda = 0.03 at tau = 1000), R below 1e-31 at lambda = 0 from
tau = 150, and that dtau = 0.4 ends between other plateaus (M = 4,
lambda = 0.01: Q 9 % lower), so the step stays 0.2. Timing, 200 steps at
lambda = 0.1: 1.1, 2.0 and 6.0 s of CPU at M = 4, 16, 64 with both cores
busy; for this design, 200 steps of seed 1 at lambda = 0.1 at M = 64 and
256, one after the other on a busy machine: 4.65 and 18.2 s of CPU (a ratio
of 3.9; their /history/wall_time 14.4 and 69.5 s, a ratio of 4.8; their Q
was not looked at).

  python3 scripts/experiments/weight_decay.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

Cost, at the CPU per step above (0.0055, 0.010, 0.030, 0.118 s at M = 4,
16, 64, 256): the first runs, 405,000 steps at M <= 64 and 9,000 at
M = 256, take 7,200 s of CPU; continuations as many as the earlier run's
(15 at M <= 64, 1,130 s), half of M = 256's (270 s) and a few second ones
(300 s) bring it to 8,900 s, 74 minutes on 2 cores. The earlier full run
took 80 minutes for what this rate puts at 61 (cores shared with builds
and tests, 1.32 times slower): about 98 minutes (102 at the wall-time
ratio 4.8 for M = 256), and 117 if every run were continued once. With
--slurm the sweep runs the first runs; `--from-sweep JOB` continues the
runs that need it locally. Writes weight_decay.csv (per M and lambda: the
horizon, seeds, diverged runs, runs continued once and twice, R*,
R*/lambda and Q* with their t-intervals, |theta|^2, the largest drift, the
stationarity threshold, how many runs met it, and the mft version and
earliest creation time of the cell's run files), weight_decay-criteria.txt
(the plan lines, then the verdicts) and exp_weight_decay.png (R*/lambda
against lambda with its intervals; Q* against M^-1/2 per lambda with its
intervals and the per-seed M^-1/2 fit; every run's drift against its
threshold).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import argparse
import math

import numpy as np

import common
import stats
from common import Run

# wide: the one M beyond widths, run at wide_lambdas only (its cost: the docstring)
FULL = dict(lambdas=[0.0, 1e-2, 3e-2, 1e-1], widths=[4, 16, 64], wide=256, wide_lambdas=[1e-1],
            seeds=[7, 8, 9, 10, 11, 12], L=2, N=32, teacher=4, mlp_width=4, dtau=0.2, every=50, control_tau=200.0)
QUICK = dict(lambdas=[0.0, 0.05, 0.15], widths=[2, 4, 8], wide=16, wide_lambdas=[0.15], seeds=[1, 2, 3], L=2, N=8,
             teacher=2, mlp_width=2, dtau=0.5, every=10, control_tau=50.0)
HORIZON = 30.0             # tau = HORIZON / lambda
CONTINUED = (45.0, 60.0)   # a run not stationary continues to 45 / lambda, then once more to 60 / lambda
WINDOW = 3.0      # the drift: the drop of Q over the last WINDOW / lambda of a run
SHARE = 0.5       # sanity a: the drift below SHARE times its cell's standard error of Q*
MARGIN = 0.1      # criterion 1: the slope's lower end at or above 1 - MARGIN
BAND = 0.01       # criterion 2: the last step inside +-BAND Q* of the widest M: converged already
CONTROL = 1e-3    # sanity b: R of the lambda = 0 runs against R* at the smallest lambda
# The pilot: seeds 1..6 of the earlier design (docs/experiments/weight_decay-criteria.txt at 86c77a6), the
# spreads recovered from its 95 % t-intervals on 5 dof (sd = half-width sqrt(6) / t_{0.975,5}).
PILOT = dict(seeds=6,
             slope_distance=0.94,        # its smallest slope of log R* (1.84, M = 4 and 64) less 1 - MARGIN
             slope_spread=0.0572,        # its widest (M = 4: [1.78, 1.9])
             step=0.00512,               # Q*(16) - Q*(64) at lambda = 0.1
             step_difference_spread=0.00092,  # |Q*(4) - Q*(16)| - |Q*(16) - Q*(64)| at 0.1: [-0.00318, -0.00125]
             last_step_spread=0.00040,   # Q*(16) - Q*(64) at 0.1: [0.0047, 0.00554]
             q_limit=0.1022)             # Q_inf of its per-seed M^-1/2 fit at 0.1
COLUMNS = ["M", "lambda", "tau", "seeds", "diverged", "extended", "extended_again", "risk", "risk_low", "risk_high",
           "ratio", "ratio_low", "ratio_high", "objective", "objective_low", "objective_high", "norm2", "drift_max",
           "threshold", "stationary"]


def cells(size):
    """The (M, lambda) the design runs: every lambda at the widths, the wide M at its lambdas."""
    return [(M, lam) for M in size["widths"] for lam in size["lambdas"]] + \
        [(size["wide"], lam) for lam in size["wide_lambdas"]]


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
    for M, lam in cells(size):
        q = [results[M, lam, s]["objective"] for s in size["seeds"] if (M, lam, s) in results]
        if lam > 0:
            out[M, lam] = SHARE * np.std(q, ddof=1) / np.sqrt(len(q)) if len(q) > 1 else np.nan
    return out


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    first = {}
    for M, lam in cells(size):
        for s in size["seeds"]:
            steps = steps_to(horizon(lam, size), size)
            first[M, lam, s] = Run(run_name(M, lam, s, horizon(lam, size)), {
                **configuration(M, lam, s, size), "train.steps": steps, "output.snapshot_every": steps})
    if not options.from_sweep and not options.slurm:
        print(f"[weight_decay] {len(first)} runs, {sum(r.args['train.steps'] for r in first.values())} steps; "
              "see the docstring for the expected time", flush=True)
    paths = common.execute("weight_decay", list(first.values()), options)
    results = {k: measure(paths[r.name], k[1]) for k, r in first.items() if r.name in paths}
    files = {k: [paths[r.name]] for k, r in first.items() if r.name in paths}  # each row's "runs"

    # Continue the runs not stationary, each time against the cells' values then.
    late = {}  # (M, lambda, seed): how many times continued
    local = argparse.Namespace(**vars(options))
    local.from_sweep = None  # the sweep ran the first runs; these run here
    for factor in CONTINUED:
        limit = thresholds(size, results)
        more = {k: Run(run_name(*k, horizon(k[1], size, factor)), {
            "restart": str(files[k][-1]), **configuration(*k, size),
            "train.steps": steps_to(horizon(k[1], size, factor), size),
            "output.snapshot_every": steps_to(horizon(k[1], size, factor), size)})
            for k, v in results.items() if k[1] > 0 and not excess(v["drift"], limit[k[:2]]) < 1}
        if not more:
            break
        print(f"[weight_decay] {len(more)} runs not stationary: continued to {factor:g}/lambda", flush=True)
        done = common.execute("weight_decay", list(more.values()), local)
        for k, r in more.items():
            late[k] = late.get(k, 0) + 1
            if r.name in done:
                results[k] = measure(done[r.name], k[1])
                files[k].append(done[r.name])
            else:  # diverged on the way: counted as diverged
                results.pop(k)
                files.pop(k)
    limit = thresholds(size, results)
    for (M, lam, s), v in sorted(results.items()):
        state = ""
        if lam > 0:
            state = (f", drift {v['drift']:.2e} against {limit[M, lam]:.2e}: "
                     f"{'stationary' if excess(v['drift'], limit[M, lam]) < 1 else 'not stationary'}"
                     f"{f' (continued {late[M, lam, s]}x)' if (M, lam, s) in late else ''}")
        print(f"run: M = {M}, lambda = {lam:g}, seed {s}: tau {v['tau']:g}, R {v['risk']:.4e}, "
              f"Q {v['objective']:.6e}{state}", flush=True)
    rows, lines, fits = analyse(size, results, files, late, limit)
    common.write_csv("weight_decay", options, COLUMNS, rows)
    common.write_criteria("weight_decay", options, lines)
    plot(size, rows, results, late, limit, fits, options)


def bounds(iv):
    return (iv.value, iv.low, iv.high) if iv else (np.nan, np.nan, np.nan)


def analyse(size, results, files, late, limit):
    """The CSV's rows, the plan and verdict lines and the fits the figure draws."""
    seeds, widths, wide = size["seeds"], size["widths"], size["wide"]
    positive = [lam for lam in size["lambdas"] if lam > 0]
    rows = []
    for M, lam in cells(size):
        found = [results[M, lam, s] for s in seeds if (M, lam, s) in results]
        R = [v["risk"] for v in found]
        Q = [v["objective"] for v in found]
        risk, objective = stats.finite_interval(R), stats.finite_interval(Q)
        ratio = stats.finite_interval(np.divide(R, lam)) if lam > 0 else None
        drifts = [v["drift"] for v in found]
        row = {"M": M, "lambda": lam, "tau": horizon(lam, size), "seeds": len(seeds),
               "diverged": len(seeds) - len(found), "extended": sum((M, lam, s) in late for s in seeds),
               "extended_again": sum(late.get((M, lam, s), 0) > 1 for s in seeds),
               "norm2": np.mean(2 * (np.array(Q) - R) / lam) if lam > 0 and found else np.nan,
               "drift_max": max(drifts) if lam > 0 and found else np.nan,
               "threshold": limit.get((M, lam), np.nan),
               "stationary": sum(excess(d, limit[M, lam]) < 1 for d in drifts) if lam > 0 else np.nan,
               "runs": [p for s in seeds for p in files.get((M, lam, s), [])]}
        for name, iv in (("risk", risk), ("ratio", ratio), ("objective", objective)):
            row[name], row[name + "_low"], row[name + "_high"] = bounds(iv)
        rows.append(row)

    def complete(keys):
        return [s for s in seeds if all((*k, s) in results for k in keys)]

    n = len(seeds)
    lines = [
        stats.Plan(f"criterion 1, the slope's lower end above {1 - MARGIN:g}", PILOT["slope_distance"],
                   PILOT["slope_spread"], PILOT["seeds"], n).line(),
        stats.Plan("criterion 2, the step difference above 0 at lambda 0.1 (band: an M^-1/2 law's, half the pilot's "
                   "Q*(16) - Q*(64))", PILOT["step"] / 2, PILOT["step_difference_spread"], PILOT["seeds"], n).line(),
        stats.Plan(f"criterion 2, the last step inside +-{BAND:g} Q*(widest) at lambda 0.1 (band at the pilot's Q_inf)",
                   BAND * PILOT["q_limit"], PILOT["last_step_spread"], PILOT["seeds"], n).line()]
    fits = {"slopes": {}, "steps": {}, "limits": {}}
    # 1. The power of R* in lambda, seed by seed, at every M <= 64.
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
        f"R* = O(lambda) at every M <= {widths[-1]}: the per-seed slope of log R* against log lambda over lambda = "
        f"{', '.join(f'{lam:g}' for lam in positive)} has its interval's lower end >= {1 - MARGIN:g}", held,
        "; ".join(parts) + f"; R*/lambda at M = {widths[-1]}: "
        + ", ".join(f"{r['ratio']:.3g} (lambda {r['lambda']:g})" for r in widest)))

    # 2. The steps of Q* in M, paired by seed: judged at the wide M's lambdas over its two narrower widths,
    # reported at the others over the three widths.
    def steps(lam, trio):
        """The paired steps over the widths `trio`: (their text, whether they pass criterion 2)."""
        cs = complete([(M, lam) for M in trio])
        if len(cs) < 2:
            return f"lambda {lam:g}: {len(cs)} complete seeds, no interval", False
        a, b, c = trio
        Q = np.array([[results[M, lam, s]["objective"] for M in trio] for s in cs])
        first, second = np.abs(Q[:, 0] - Q[:, 1]), np.abs(Q[:, 1] - Q[:, 2])
        shrink, last = stats.paired(first, second), stats.paired(Q[:, 1], Q[:, 2])
        law = stats.per_seed_fits([np.ones(3), np.array(trio, float) ** -0.5], Q, ("Q_inf", "b"))
        fits["steps"][lam], fits["limits"][lam] = shrink, (trio, law)
        top = Q[:, 2].mean()
        flat = -BAND * top < last.low and last.high < BAND * top
        return (f"lambda {lam:g}: |Q*({a}) - Q*({b})| - |Q*({b}) - Q*({c})| {shrink.text()}, Q*({b}) - Q*({c}) "
                f"{last.text()}{' (inside the band)' if flat else ''}, steps {100 * first.mean() / top:.2f} % then "
                f"{100 * second.mean() / top:.2f} % of Q*({c}) (ratio {second.mean() / first.mean():.2f}); "
                f"Q_inf {law['Q_inf'].text(4)}, b {law['b'].text()}"), shrink.low > 0 or flat

    judged = [steps(lam, (widths[-2], widths[-1], wide)) for lam in size["wide_lambdas"]]
    beside = [steps(lam, tuple(widths[-3:]))[0] for lam in positive if lam not in size["wide_lambdas"]]
    b, c = widths[-1], wide
    lines.append(common.criterion(
        f"Q* converges in M at lambda = {', '.join(f'{lam:g}' for lam in size['wide_lambdas'])}: paired by seed, "
        f"|Q*({widths[-2]}) - Q*({b})| - |Q*({b}) - Q*({c})| has its interval above 0, or Q*({b}) - Q*({c}) has its "
        f"interval inside +-{BAND:g} Q*({c})", all(h for _, h in judged),
        "; ".join(t for t, _ in judged) + "; not judged: " + "; ".join(beside)))

    # a. Stationarity at each run's end.
    total = sum(lam > 0 for _, lam in cells(size)) * len(seeds)
    ends = [(k, excess(v["drift"], limit[k[:2]])) for k, v in results.items() if k[1] > 0]
    still = sum(x < 1 for _, x in ends)
    worst = max(ends, key=lambda j: np.nan_to_num(j[1], nan=np.inf), default=None)
    lines.append(common.sanity(
        f"every run with lambda > 0 is stationary: the drop of Q over its last {WINDOW:g}/lambda below {SHARE:g} "
        f"times its cell's standard error of Q* (at {HORIZON:g}/lambda, or "
        f"{' or '.join(f'{f:g}' for f in CONTINUED)}/lambda where continued)", still == total,
        f"{still} of {total} runs ({total - len(ends)} diverged); "
        + ", ".join(f"{sum(t >= i for t in late.values())} continued to {f:g}/lambda"
                    for i, f in enumerate(CONTINUED, 1)) + "; "
        + (f"largest drift / threshold {worst[1]:.2f} (M = {worst[0][0]}, lambda {worst[0][1]:g}, seed "
           f"{worst[0][2]})" if worst else "no run")))

    # b. The controls against the smallest lambda's R*.
    smallest = positive[0]
    parts, held = [], True
    for M in widths:
        zero = [results[M, 0.0, s]["risk"] for s in seeds if (M, 0.0, s) in results]
        star = np.mean([results[M, smallest, s]["risk"] for s in seeds if (M, smallest, s) in results] or [np.nan])
        held &= len(zero) == len(seeds) and max(zero) < CONTROL * star
        parts.append(f"M = {M}: largest {max(zero, default=np.nan):.1e} of {len(zero)} against {CONTROL * star:.1e}")
    lines.append(common.sanity(
        f"every lambda = 0 run ends with R below {CONTROL:g} times the mean R* at lambda = {smallest:g} at its M",
        held, "; ".join(parts)))
    return rows, lines, fits


def plot(size, rows, results, late, limit, fits, options):
    plt = common.pyplot()
    widths = size["widths"] + [size["wide"]]
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
        bars(left, np.array([r["lambda"] for r in sel]) * 1.04 ** (i - 1), sel, "ratio", marker="o", color=f"C{i}",
             label=f"M = {M}" + (f": slope of R* {slope.text(3)}" if slope else ""))
    # The boundary of criterion 1 through the widest judged M's largest lambda.
    lam = np.array(positive)
    top = [r for r in rows if r["M"] == size["widths"][-1] and r["lambda"] == positive[-1]][0]["ratio"]
    left.plot(lam, top * (lam / lam[-1]) ** -MARGIN, "k:", lw=0.9,
              label=f"criterion 1's boundary: R* ~ lambda^{1 - MARGIN:g}")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel(f"weight decay lambda (run to tau = {HORIZON:g}/lambda)")
    left.set_ylabel("R* / lambda")
    zero = max((results[k]["risk"] for k in results if k[1] == 0), default=np.nan)
    left.set_title(f"criterion 1; the lambda = 0 controls end at R <= {zero:.0e} (sanity b)", fontsize=8)

    for ax, lam in zip(middle, positive):
        sel = [r for r in rows if r["lambda"] == lam]
        x = np.array([r["M"] for r in sel], float) ** -0.5
        bars(ax, x, sel, "objective", marker="s", color="C0", ls="none", label="Q*")
        trio, law = fits["limits"].get(lam, (None, None))
        if law:
            c0, c1 = law.estimates.mean(axis=0)
            grid_x = np.linspace(0, min(trio) ** -0.5, 30)
            ax.plot(grid_x, c0 + c1 * grid_x, "k--", lw=0.8,
                    label=f"mean per-seed Q_inf + b M^-1/2 over M = {', '.join(map(str, trio))}")
            q = law["Q_inf"]
            ax.errorbar([0], [q.value], yerr=[[q.value - q.low], [q.high - q.value]], marker="D", color="C3",
                        capsize=3, label="Q_inf")
        shrink = fits["steps"].get(lam)
        judged = "criterion 2" if lam in size["wide_lambdas"] else "not judged"
        ax.set_title(f"lambda = {lam:g} ({judged})" + (f"; first step less second: {shrink.text(2)}" if shrink else ""),
                     fontsize=7)
        ax.set_xticks(np.concatenate([[0], x]))
        ax.set_xticklabels(["inf"] + [str(r["M"]) for r in sel], fontsize=7)
        ax.set_ylabel("Q*", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    middle[-1].set_xlabel("M (axis in M^-1/2)")

    for i, M in enumerate(widths):
        for times in range(len(CONTINUED) + 1):
            pts = [(k[1] * 1.06 ** (i - 1), excess(v["drift"], limit[k[:2]])) for k, v in results.items()
                   if k[0] == M and k[1] > 0 and late.get(k, 0) == times]
            if pts:
                right.plot(*zip(*pts), "o^s"[times], ms=4, ls="none", color=f"C{i}",
                           label=f"M = {M}" + (f", continued to {CONTINUED[times - 1]:g}/lambda" if times else ""))
    right.axhline(1, color="k", ls=":", lw=0.9, label="threshold")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("lambda")
    right.set_ylabel(f"drop of Q over the last {WINDOW:g}/lambda / ({SHARE:g} SE of Q*)")
    right.set_title("sanity a: every run", fontsize=8)
    fig.suptitle(f"error bars: 95 % Student-t over the seeds ({len(size['seeds']) - 1} dof with all "
                 f"{len(size['seeds'])}); R*, Q*: at each run's end", fontsize=9)
    common.finish_axes([left, right], legend_size=6)
    common.save_figure(fig, "weight_decay", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

#!/usr/bin/env python3
"""Mean-field Langevin at stationarity under weight decay, with the step
taken to zero. With weight decay lambda every particle follows (MODEL.md
sections 4, 6 and 10's mean-field Langevin)

    d theta = -(M L) dQ/d theta dtau + sqrt(2 T) dW,
    Q = R + (lambda/2) (1/(M L)) sum_lm |theta_lm|^2,

so the particles' stationary law is proportional to exp(-M L Q(theta) / T),
normalisable for lambda > 0 (without decay, exp(-M L R / T) is not: R is
flat along its minima, and the particles drift along them). Near the
minimiser theta* of Q (Laplace), every direction in which Q curves holds
T/2 of M L Q, whatever its curvature:

    E[Q] - Q* = T n / (2 M L) + O(T^2),   n = P - S,

P the parameters (192 a head: Q, K, V of 8 x 8), S the directions along
which Q is exactly constant at theta*: the rotations (Q_m, K_m) ->
(O Q_m, O K_m), O in O(d_h), which leave every score and |theta|^2 as they
are: C(d_h, 2) - C(d_h - r, 2) a head whose [Q_m K_m] has rank r (28 at full
rank, none at Q_m = K_m = 0).

Why Q and not R. At theta* R is not at its minimum (dR/d theta = -lambda
theta* / (M L), R* = O(lambda^2): weight_decay measured R*/lambda = 0.1 to
0.9 at lambda = 0.01 to 0.1), so R's excess has a first-order term
dR . E[theta - theta*], set by third derivatives the kernel does not give,
and fluctuations (1/N) r* . delta r far above T N / (2 M L) at these T;
both cancel in Q, whose gradient is zero at theta*. The lambda = 0 law
E[R] = T N d_out / (2 M L) of the earlier design describes the stiff
directions' equilibrium along a minimum that drifts, not a normalisable
measure; under decay it has no counterpart computable from mft's outputs.

Why lambda = 1. The directions flat in R are held by lambda alone: their
energy relaxes at 2 lambda and the flow reaches theta* at a rate near
lambda (weight_decay needed 30/lambda to 60/lambda of flow). At this
design's steps lambda = 0.1 would cost over six hours (flows of 300, runs
of 200 in tau); lambda = 1 reaches theta* well within tau = 40 and relaxes
in tau = 8. The price: the decay dominates R there (at lambda = 0.1
weight_decay's R* was already 0.7 lambda), the minimiser is a shrunk model
(R* near 0.4 in the quick run below) whose kernel is soft (kappa below
lambda), and most heads collapse to Q_m = K_m = 0 while a few stay active
with a rank-1 [Q_m K_m] (7 rotation directions each): n is counted per seed
from theta*, and sanity c checks that it is one number over the sweep. The
test is of mft's Langevin sampling of a normalisable Gibbs law, with the
noise, data and model of the earlier design, not of equipartition of R at
an interpolating minimum.

mft integrates with Euler-Maruyama, whose stationary energy along a mode of
curvature h (an eigenvalue of M L d^2Q) is T/2 times 1/(1 - dtau h/2). In
the quadratic model, with the N d_out stiff modes at kappa_i + lambda
(kappa_i = lambda_i(K_all)/N, the kernel at theta*) and the other n - N d_out
at lambda, the measured ratio (Q_bar - Q*) / (T n / (2 M L)) is

    r(dtau) = [sum_i 1/(1 - dtau (kappa_i + lambda)/2)
               + (n - N d_out) / (1 - dtau lambda/2)] / n  ~  1 + dtau lambda/2,

the Euler-Maruyama model below (it leaves out the residual curvature
(1/N) sum_i r_i d^2 yhat_i, which moves the soft curvatures by O(|r*|)).

Setting: the teacher task (N = 16, d_out = 1, 4 teacher heads), M = 64,
L = 4 (P = 49,152), seeds 1..8, lambda = 1. dtau_0 = min(0.02, N / (4
lambda_max(K_all(0)))), the largest lambda_max over the seeds (0.0076 in the
earlier run). Per seed the flow with decay (T = 0) runs from the drawn
particles to tau = 40 at 2 dtau_0: theta*, Q* and its kernel (mft ntk).
From theta* (the warm start, shared by every run of the seed) Langevin runs
at T in {1e-5, 1e-4, 1e-3} and dtau in {4, 2, 1} dtau_0 to tau = 20. Q_bar
is the mean of Q over tau in [8, 20]: the burn-in of 8/lambda leaves e^-16
of the energy of modes at lambda unrelaxed (e^-8 at lambda/2, the slowest
collapse the quick run showed), the window is 24 of their energy
correlation times 1/(2 lambda). The stationarity test compares the window's
two halves, each with its error from 10 batch means (batches of 1.2 in tau).
The steps are 4, 2, 1 times dtau_0: the effect is dtau lambda/2 = 1.5 % at
the largest, the model line's own bias at dtau = 0 -7e-5.

Per seed and T, ratio = r0 + r1 x (x = dtau/dtau_0) by least squares over
the three steps (a seed's runs share its warm start and, at one step, its
noise at every T: a nested design, fitted seed by seed). Per seed and step,
p is the log-log slope of Q_bar - Q* against T, and p = p0 + p1 x. Every
interval is the 95 % Student-t interval over the seeds' fits (7 dof).

Criteria, stated before the runs (claims of the theory; each can fail):
  1. the confined Gibbs law at dtau -> 0: at the smallest T, r0's interval
     lies inside 1 +- 0.01. Fails when the chain samples another law (a
     scale between noise, decay and M L off), when the soft directions have
     not relaxed (r0 low), when theta* has flat directions besides the
     rotations (r0 off by their share) or Q* is not its minimum; holds with
     the planned half-width (0.006) when the law holds;
  2. the excess is linear in T at dtau -> 0: p0's interval lies inside
     1 +- 0.02. Fails when the law bends over T = 1e-5..1e-3 (the earlier
     design's R, at lambda = 0, had p = 1.065 [1.053, 1.077]) or a Q*
     offset bends it at the smallest T;
  3. the step's effect is Euler-Maruyama's: at the smallest T r1 dtau_0 has
     its interval above 0 (resolved) and its paired difference from the
     model line's slope (fitted to r(dtau) at the same steps, each seed's
     kernel at theta*) has an interval containing 0. Fails when the step
     changes nothing resolvable, or something else than the model says.
Sanity checks (of the design: a failure is a broken design, not a finding):
  a. every Langevin run is stationary: the means of Q over the two halves
     of its window differ by less than q combined batch-mean errors, q the
     two-sided Student-t quantile at 1 - 0.05/n with 18 dof (n the number
     of runs: Bonferroni);
  b. the flow reached theta*: its Q fell over its last quarter by less than
     1e-3 of the smallest T's T n / (2 M L) (so Q* is right to 0.1 %);
  c. the count n is one number over the sweep: no singular value of any
     head's [Q_m K_m] at theta* lies between 0.1 sqrt(T_min/lambda) and
     10 sqrt(T_max/lambda) (the thermal spread of a coordinate), where a
     rotation orbit is neither resolved nor collapsed;
  d. the largest step holds the stiffest mode's factor 1/(1 - dtau h/2)
     below 4: 4 dtau_0 (kappa_max + lambda) <= 1.5 at every theta*.

Power (stats.Plan lines): no run at lambda > 0 of this setting exists (the
earlier design measured R at lambda = 0), so the spread is computed, not
piloted: Q_bar - Q* is a sum of n mode energies, each of variance (T/2)^2 2
and correlation time 1/(2 lambda), so a window W gives Q_bar a relative
error sqrt(2 / (n lambda W)) = 0.0018 (n near 49,152, W = 12); the plans take
three times that, 0.0055 a run, through each fit's design (r0: 1.22 times
it, r1 dtau_0: 0.46 times it, p0: 0.38 times it). The bands: criterion 1
1 %, against the factor 2 a noise sqrt(T dtau) instead of sqrt(2 T dtau)
would give, or the 1.5 % of the largest step left uncorrected; criterion 2
0.02, a third of the earlier power's excess; criterion 3's bound is the
model's slope lambda dtau_0/2.

Relabelled from the earlier design: its stationarity and warm-start
criteria are sanity checks a and b; its criteria for R become 1 to 3 for Q.

What was seen before these were stated: the earlier design's results (R
at lambda = 0, seeds 1..8, dtau_0 = 0.0076, criteria of 24d6af7 run from
9d9c9e5): equipartition of R at dtau -> 0 held at T = 1e-5 (r0 0.981
[0.941, 1.02]) but not above (1.12 at 1e-4, 1.32 at 1e-3), R* had power
1.065 [1.053, 1.077] at every step, one of 72 runs missed the stationarity
bound (4.20 against 4.09, T = 1e-3), the step's effect matched the model
(difference 0.0123 [-0.0381, 0.0626]); a referee read the excess as drift
along R's minima, which only confinement removes. weight_decay's runs (an
attention + MLP student, N = 32, L = 2): R*/lambda 0.10, 0.30, 0.70 at
lambda = 0.01, 0.03, 0.1, Q falling in steps between plateaus for 30/lambda
and more. This design's --quick run (M = 8, L = 2, N = 8, seeds 1, 2,
T = 1e-4, 1e-3, dtau_0 = 0.0012, flows to tau = 10, runs to 3): Q* 0.563,
0.573 and R* 0.427, 0.381 (from R(0) 1.18, 0.83); one and three of 16 heads
active (largest singular value of [Q_m K_m] 0.94 to 1.36, the next ones
collapsing, |V_m| 0.86 to 1.29 against 0.23 at the others), the collapsing
heads at 2e-4 to 0.031 at tau = 10 (from near 3.4: a rate of 0.47 or more);
n per particle 191.56, 190.69; kappa at theta* 0.017 to 0.74; the flows still falling
(last-quarter drops 1.2e-3 and 2.8e-3 of Q, at rates 1.3 and 0.8 a unit of
tau), so the runs were not stationary (statistics 5.0 to 8.5) and the
ratios 0.959 to 0.977 at every step and T; p 1.003 [0.976, 1.031] (1 dof).
No full-size run at lambda > 0 was made.

  python3 scripts/experiments/langevin.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft ntk` runs set the step and the model). 8 + 8
kernels, 8 flows of 2,632 steps and 72 Langevin runs of 658, 1,316, 2,632
steps: 131,600 steps at dtau_0 = 0.0076, against the earlier run's 119,000
(and 8 flows of 1,053: 127,400) in 41 minutes on 2 cores: about 45 minutes,
more in proportion if a seed's lambda_max(K_all(0)) exceeds 525 and so
shortens dtau_0. Writes langevin.csv (the minimum: Q* with its interval,
R*, the count n/(M L) as `model`, the flows' largest last-quarter drop as
`stationarity`; the ratio with its interval and the model's at every T and
step, dtau = 0 the extrapolation, with the mean Q_bar and R_bar; the power
at every step; each row's runs' version and creation time), langevin-criteria.txt (the plan lines, then the verdicts)
and exp_langevin.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
from math import comb

import numpy as np

import common
import stats
from common import Run

FULL = dict(seeds=list(range(1, 9)), M=64, L=4, N=16, dtau=0.02, decay=1.0, flow_tau=40.0, tau=20.0, burn=8.0,
            temperatures=[1e-5, 1e-4, 1e-3])
QUICK = dict(seeds=[1, 2], M=8, L=2, N=8, dtau=0.02, decay=1.0, flow_tau=10.0, tau=3.0, burn=1.0,
             temperatures=[1e-4, 1e-3])
STEPS = (4.0, 2.0, 1.0)  # dtau / dtau_0
FLOW_STEP = 2.0          # the flow's dtau / dtau_0
HEAD_PARAMETERS = 192    # Q, K (d_h x d) and V (d x d) at d = d_h = 8
BATCHES = 10
FAMILY = 0.05            # sanity a: the chance that some stationary run fails it
RATIO_BAND = 0.01        # criterion 1
POWER_BAND = 0.02        # criterion 2
SAFETY = 3.0             # the plans' spread: this times the computed one
CONVERGED = 1e-3         # sanity b: the flow's last-quarter drop against T_min n / (2 M L)
ORBIT = 10.0             # sanity c: resolved above ORBIT, collapsed below 1/ORBIT times the thermal spread
STIFFEST = 1.5           # sanity d: the largest dtau (kappa_max + lambda)
COLUMNS = ["quantity", "T", "dtau", "seeds", "diverged", "value", "low", "high", "model", "objective", "risk",
           "stationarity"]


def batch_mean(x):
    """The mean and its error from BATCHES batch means."""
    means = np.array([c.mean() for c in np.array_split(x, BATCHES)])
    return float(x.mean()), float(means.std(ddof=1) / np.sqrt(len(means)))


def stationary_means(history, burn):
    """(Q_bar and R_bar, the means over tau >= burn; the stationarity
    statistic |mean(first half) - mean(second half)| of Q over their
    combined batch-means error)."""
    keep = np.asarray(history["tau"]) >= burn
    q = np.asarray(history["objective"], float)[keep]
    (m1, e1), (m2, e2) = batch_mean(q[:len(q) // 2]), batch_mean(q[len(q) // 2:])
    return float(q.mean()), float(np.asarray(history["risk"], float)[keep].mean()), abs(m1 - m2) / max(
        np.hypot(e1, e2), 1e-300)


def model_ratio(kappa, decay, n, dtau):
    """Euler-Maruyama's stationary excess in the quadratic model: the mean
    over the n modes of 1/(1 - dtau h/2), the stiff ones at kappa_i + lambda,
    the rest at lambda; inf past stability."""
    h = dtau * np.append(np.asarray(kappa) + decay, decay) / 2
    if np.any(h >= 1):
        return np.inf
    weights = np.append(np.ones(len(kappa)), n - len(kappa))
    return float(np.sum(weights / (1 - h)) / n)


def orbit_count(particles, low, high):
    """(S, the rotation directions along which Q is constant; the singular
    values of the heads' [Q_m K_m] between low and high): a head of rank r
    (singular values above high) has an orbit of C(d_h, 2) - C(d_h - r, 2)."""
    stacked = np.concatenate([particles["Q"], particles["K"]], axis=-1)  # (L, M, d_h, 2 d)
    values = np.linalg.svd(stacked, compute_uv=False)
    d_h = stacked.shape[-2]
    ranks = (values > high).sum(axis=-1)
    orbits = comb(d_h, 2) - np.array([comb(d_h - r, 2) for r in ranks.ravel()])
    return int(orbits.sum()), int(((values >= low) & (values <= high)).sum())


def design_spreads(size):
    """The plans' per-seed spreads of r0, r1 x and p0 (the docstring's
    Power): SAFETY times sqrt(2 / (n lambda W)) through each fit's design."""
    n = size["M"] * size["L"] * HEAD_PARAMETERS
    run = SAFETY * np.sqrt(2 / (n * size["decay"] * (size["tau"] - size["burn"])))
    x = np.array(STEPS)
    sxx = np.sum((x - x.mean()) ** 2)
    intercept = np.sqrt(1 / len(x) + x.mean() ** 2 / sxx)
    logs = np.log(size["temperatures"])
    return {"r0": run * intercept, "r1": run / np.sqrt(sxx),
            "p0": run / np.sqrt(np.sum((logs - logs.mean()) ** 2)) * intercept}


def main():
    import langevin_figure  # imports this driver: here, not at the top, so that importing it stays acyclic
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "langevin")
    size = QUICK if options.quick else FULL
    import h5py

    decay = size["decay"]

    def base(seed):
        return {"data.task": "teacher", "data.teacher_heads": 4, "data.sequences": size["N"],
                "model.heads": size["M"], "model.slices": size["L"], "init.seed": seed}

    seeds, temperatures, N = size["seeds"], size["temperatures"], size["N"]
    kernels = [Run(f"s{s}-ntk", {**base(s), "ntk.part": "all"}, command="ntk") for s in seeds]
    paths = common.execute("langevin", kernels, options)
    top = 0.0
    for run in kernels:
        with h5py.File(paths[run.name], "r") as f:
            top = max(top, float(f["ntk"].attrs["lambda_max"]))
    dtau0 = float(f"{min(size['dtau'], N / (4 * top)):.2g}")
    flow_steps = int(round(size["flow_tau"] / (FLOW_STEP * dtau0)))
    print(f"[langevin] dtau_0 = {dtau0:g} (largest lambda_max(K_all(0)) {top:.4g}); lambda = {decay:g}; steps "
          + ", ".join(f"{x * dtau0:g} ({int(round(size['tau'] / (x * dtau0)))} steps)" for x in STEPS), flush=True)
    # The flow's file is named by its decay and length, so that a changed
    # flow is a new warm start and the runs that start from it are redone.
    flow = {s: f"s{s}-flow-l{decay:g}-k{flow_steps}" for s in seeds}
    flows = [Run(flow[s], {**base(s), "train.temperature": 0.0, "train.lambda": decay, "train.steps": flow_steps,
                           "train.dtau": FLOW_STEP * dtau0, "output.snapshot_every": flow_steps}) for s in seeds]
    paths.update(common.execute("langevin", flows, options))
    started = [s for s in seeds if flow[s] in paths]
    name = lambda T, x, s: f"T{T:g}-x{x:g}-s{s}"
    minima = [Run(f"s{s}-ntkmin", {"from": paths[flow[s]], "snapshot": -1, "ntk.part": "all"}, command="ntk")
              for s in started]
    hot = [Run(name(T, x, s), {**base(s), "init.file": str(paths[flow[s]]), "train.temperature": T,
                               "train.lambda": decay, "train.steps": int(round(size["tau"] / (x * dtau0))),
                               "train.dtau": x * dtau0,
                               "output.snapshot_every": int(round(size["tau"] / (x * dtau0)))})
           for s in started for T in temperatures for x in STEPS]
    paths.update(common.execute("langevin", minima + hot, options))

    measured = {}  # (T, x, seed): (Q_bar, R_bar, stationarity)
    for T in temperatures:
        for x in STEPS:
            for s in started:
                if name(T, x, s) in paths:
                    measured[T, x, s] = stationary_means(common.history(paths[name(T, x, s)])[0], size["burn"])
    # A seed enters the fits only with every run of it finished (its curves
    # are nested); the others are counted as diverged.
    complete = [s for s in started if all((T, x, s) in measured for T in temperatures for x in STEPS)]
    spread = np.sqrt(np.array([min(temperatures), max(temperatures)]) / decay)
    minimum = {}  # seed: Q*, R*, the flow's last-quarter drop, n, the crossover singular values, kappa
    for s in started:
        h = common.history(paths[flow[s]])[0]
        tau, q = np.asarray(h["tau"], float), np.asarray(h["objective"], float)
        run = common.mft_io.open_run(str(paths[flow[s]]))
        particles, ml = run.particles(-1), size["M"] * size["L"]
        run.close()
        if set(particles) != {"Q", "K", "V"}:
            raise SystemExit(f"error: {paths[flow[s]]}: particles {sorted(particles)}, expected Q, K, V")
        S, crossing = orbit_count(particles, spread[0] / ORBIT, ORBIT * spread[1])
        with h5py.File(paths[f"s{s}-ntkmin"], "r") as f:
            kappa = np.asarray(f["ntk/eigenvalues"][()], float) / N
        minimum[s] = {"Q": float(q[-1]), "R": float(h["risk"][-1]),
                      "drop": float(q[np.searchsorted(tau, 0.75 * tau[-1])] - q[-1]),
                      "n": sum(a.size for a in particles.values()) - S, "crossing": crossing, "kappa": kappa,
                      "ml": ml}
    files = {"flow": [paths[flow[s]] for s in started], "min": [paths[f"s{s}-ntkmin"] for s in started]}
    files.update({(T, x): [paths[name(T, x, s)] for s in started if name(T, x, s) in paths]
                  for T in temperatures for x in STEPS})
    rows, lines = analyse(size, dtau0, measured, complete, minimum, files)
    common.write_csv("langevin", options, COLUMNS, rows)
    common.write_criteria("langevin", options, lines)
    langevin_figure.plot(rows, measured, minimum, size, dtau0, complete, options)


def interval_row(quantity, T, dtau, seeds, total, found, iv, model, objective, risk, stationarity, runs):
    bounds = (iv.value, iv.low, iv.high) if iv else (np.nan,) * 3
    return dict(zip(COLUMNS, (quantity, T, dtau, seeds, total - found, *bounds, model, objective, risk,
                              stationarity)), runs=runs)


def analyse(size, dtau0, measured, seeds, minimum, files):
    """The CSV's rows and the plan and verdict lines."""
    temperatures, decay = size["temperatures"], size["decay"]
    total = len(size["seeds"])
    x = np.array(STEPS)
    # The prediction T n / (2 M L), per seed (n from its minimiser).
    unit = {s: minimum[s]["n"] / (2 * minimum[s]["ml"]) for s in minimum}
    excess = {T: np.array([[measured[T, xj, s][0] - minimum[s]["Q"] for xj in STEPS] for s in seeds])
              for T in temperatures}
    ratio = {T: excess[T] / np.array([[T * unit[s]] for s in seeds]) for T in temperatures}
    model = np.array([[model_ratio(minimum[s]["kappa"], decay, minimum[s]["n"], xj * dtau0) for xj in STEPS]
                      for s in seeds])
    known = list(minimum)
    ivq = stats.finite_interval([minimum[s]["Q"] for s in known])
    rows = [interval_row("minimum", 0.0, FLOW_STEP * dtau0, len(known), total, len(known), ivq,
                         float(np.mean([minimum[s]["n"] / minimum[s]["ml"] for s in known])) if known else np.nan,
                         ivq.value if ivq else np.nan,
                         float(np.mean([minimum[s]["R"] for s in known])) if known else np.nan,
                         max((minimum[s]["drop"] for s in known), default=np.nan), files["flow"])]
    enough = len(seeds) >= 2
    fits, powers = {}, None
    for T in temperatures:
        if enough:
            # x = dtau / dtau_0, so the slope is r1 dtau_0.
            fits[T] = stats.per_seed_fits([np.ones_like(x), x], ratio[T], ("r0", "excess"))
        for j, xj in enumerate(STEPS):
            found = [s for s in size["seeds"] if (T, xj, s) in measured]
            rows.append(interval_row(
                "ratio", T, xj * dtau0, len(seeds), total, len(found),
                stats.t_interval(ratio[T][:, j]) if enough else None,
                float(np.mean(model[:, j])) if enough else np.nan,
                float(np.mean([measured[T, xj, s][0] for s in found])) if found else np.nan,
                float(np.mean([measured[T, xj, s][1] for s in found])) if found else np.nan,
                max((measured[T, xj, s][2] for s in found), default=np.nan),
                files[T, xj] + files["flow"] + files["min"]))
        model_r0 = [np.polyfit(x, m, 1)[1] if np.all(np.isfinite(m)) else np.nan for m in model]
        rows.append(interval_row("ratio", T, 0.0, len(seeds), total, len(seeds), fits[T]["r0"] if enough else None,
                                 float(np.mean(model_r0)) if enough else np.nan, np.nan, np.nan, np.nan,
                                 [p for xj in STEPS for p in files[T, xj]] + files["flow"] + files["min"]))
    positive = enough and all(np.all(excess[T] > 0) for T in temperatures)
    if positive:
        # Per seed and step, the power of Q_bar - Q* against T; then its line in dtau.
        slopes = [stats.per_seed_slopes(temperatures, np.array([[excess[T][i, j] for T in temperatures]
                                                                  for i in range(len(seeds))]))
                  for j in range(len(STEPS))]
        powers = stats.per_seed_fits([np.ones_like(x), x], np.column_stack([f.estimates[:, 1] for f in slopes]),
                                     ("p0", "p1"))
    for j, d in enumerate(list(x * dtau0) + [0.0]):
        iv = (slopes[j]["slope"] if j < len(STEPS) else powers["p0"]) if positive else None
        runs = [p for T in temperatures for xj in STEPS if j == len(STEPS) or xj == STEPS[j] for p in files[T, xj]]
        rows.append(interval_row("power", np.nan, d, len(seeds), total, len(seeds), iv, 1.0, np.nan, np.nan,
                                 np.nan, runs + files["flow"]))
    spreads, n = design_spreads(size), len(size["seeds"])
    reason = f"spread computed, {SAFETY:g} times the chi-square estimate (no run at lambda > 0 to pilot)"
    lines = [stats.Plan(f"criterion 1, r0 inside 1 +- {RATIO_BAND:g} ({reason})", RATIO_BAND, spreads["r0"], 0,
                        n).line(),
             stats.Plan(f"criterion 2, p0 inside 1 +- {POWER_BAND:g} ({reason})", POWER_BAND, spreads["p0"], 0,
                        n).line(),
             stats.Plan(f"criterion 3, r1 dtau_0 above 0 (band: the model's lambda dtau_0/2; {reason})",
                        decay * dtau0 / 2, spreads["r1"], 0, n).line()]
    return rows, lines + criteria(size, dtau0, measured, seeds, minimum, fits, powers, model)


def criteria(size, dtau0, measured, seeds, minimum, fits, powers, model):
    temperatures, decay = size["temperatures"], size["decay"]
    cold = temperatures[0]
    few = f"{len(seeds)} complete seeds of {len(size['seeds'])}: no interval"
    lines = []
    text = (f"the confined Gibbs law at dtau -> 0: at T = {cold:g} the per-seed r0 of (Q_bar - Q*)/(T n/(2 M L)) = "
            f"r0 + r1 dtau has its interval inside 1 +- {RATIO_BAND:g}")
    if fits:
        r0 = fits[cold]["r0"]
        lines.append(common.criterion(
            text, 1 - RATIO_BAND <= r0.low and r0.high <= 1 + RATIO_BAND,
            f"r0 {r0.text(4)}; at the other T " + ", ".join(f"{fits[T]['r0'].text(4)} (T = {T:g})"
                                                           for T in temperatures[1:])))
    else:
        lines.append(common.criterion(text, False, few))
    text = (f"Q_bar - Q* linear in T at dtau -> 0: the per-seed p0 of p = p0 + p1 dtau (p the log-log slope against T "
            f"over T = {temperatures[0]:g}..{temperatures[-1]:g}) has its interval inside 1 +- {POWER_BAND:g}")
    if powers:
        p0 = powers["p0"]
        lines.append(common.criterion(text, 1 - POWER_BAND <= p0.low and p0.high <= 1 + POWER_BAND,
                                      f"p0 {p0.text(4)}; p1 dtau_0 {powers['p1'].value:.2g}"))
    else:
        lines.append(common.criterion(text, False, few if not fits else "an excess Q_bar - Q* <= 0: no power"))
    text = (f"the step's effect is Euler-Maruyama's: at T = {cold:g} r1 dtau_0 has its interval above 0 and its paired "
            "difference from the model line's (fitted to r(dtau), kappa_i from each seed's kernel at theta*) an "
            "interval containing 0")
    x = np.array(STEPS)
    if fits and np.all(np.isfinite(model)):
        model_excess = np.array([np.polyfit(x, m, 1)[0] for m in model])
        measured_excess = fits[cold]["excess"]
        difference = stats.paired(fits[cold].estimates[:, 1], model_excess)
        lines.append(common.criterion(text, measured_excess.above(0.0) and difference.contains(0.0),
                                      f"measured r1 dtau_0 {measured_excess.text()}, the model's "
                                      f"{model_excess.mean():.4f}; difference {difference.text()}"))
    else:
        lines.append(common.criterion(text, False, few if not fits else "the model is unstable at these steps"))

    count = len(temperatures) * len(STEPS) * len(size["seeds"])
    dof = 2 * (BATCHES - 1)
    q = stats.t_quantile(1 - FAMILY / count, dof)
    worst = {T: max((v[2] for k, v in measured.items() if k[0] == T), default=np.nan) for T in temperatures}
    lines.append(common.sanity(
        f"every Langevin run is stationary: the two halves of its window agree in Q within {q:.2f} combined "
        f"batch-mean errors (two-sided t quantile at 1 - {FAMILY:g}/{count}, {dof} dof)",
        len(measured) == count and all(v[2] < q for v in measured.values()),
        f"{len(measured)} of {count} runs finished; largest statistic "
        + ", ".join(f"{worst[T]:.2f} (T = {T:g})" for T in temperatures)))
    known = list(minimum)
    floor = {s: CONVERGED * cold * minimum[s]["n"] / (2 * minimum[s]["ml"]) for s in known}
    lines.append(common.sanity(
        f"every seed's flow (lambda = {decay:g}, T = 0) reached theta*: Q fell over its last quarter by less than "
        f"{CONVERGED:g} of T n/(2 M L) at T = {cold:g}",
        len(known) == len(size["seeds"]) and all(minimum[s]["drop"] < floor[s] for s in known),
        f"largest drop / bound {max((minimum[s]['drop'] / floor[s] for s in known), default=np.nan):.2g} "
        f"({len(known)} flows); Q* {np.mean([minimum[s]['Q'] for s in known]):.6g}, R* "
        f"{np.mean([minimum[s]['R'] for s in known]):.4g} (means)"))
    spread = np.sqrt(np.array([cold, temperatures[-1]]) / decay)
    lines.append(common.sanity(
        f"the count n is one number over the sweep: no singular value of a head's [Q_m K_m] at theta* between "
        f"{1 / ORBIT:g} sqrt(T_min/lambda) = {spread[0] / ORBIT:.2g} and {ORBIT:g} sqrt(T_max/lambda) = "
        f"{ORBIT * spread[1]:.2g}",
        len(known) == len(size["seeds"]) and all(minimum[s]["crossing"] == 0 for s in known),
        f"{sum(minimum[s]['crossing'] for s in known)} singular values in between; n per particle "
        + ", ".join(f"{minimum[s]['n'] / minimum[s]['ml']:g}" for s in known)))
    stiff = {s: STEPS[0] * dtau0 * (minimum[s]["kappa"].max() + decay) for s in known}
    lines.append(common.sanity(
        f"the largest step holds the stiffest mode: {STEPS[0]:g} dtau_0 (kappa_max + lambda) <= {STIFFEST:g} at every "
        "theta*", len(known) == len(size["seeds"]) and all(v <= STIFFEST for v in stiff.values()),
        f"largest {max(stiff.values(), default=np.nan):.3f}"))
    for s, m in zip(seeds, model):
        k = np.sort(minimum[s]["kappa"])
        line = np.polyfit(x, m, 1) if np.all(np.isfinite(m)) else (np.nan, np.nan)
        print(f"measured: seed {s}: kappa at theta* {k[0]:.3g}..{k[-1]:.3g} (mean {k.mean():.3g}); n per particle "
              f"{minimum[s]['n'] / minimum[s]['ml']:g}; Q* {minimum[s]['Q']:.6g}, R* {minimum[s]['R']:.4g}; the model "
              f"line: r1 dtau_0 {line[0]:.5f}, at dtau = 0 {line[1]:.5f}", flush=True)
    return lines


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

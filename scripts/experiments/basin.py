#!/usr/bin/env python3
"""The basin of [B]'s linear convergence. [B] proves that the mean-field
gradient flow on the squared loss converges linearly when the NTK at
initialisation is injective and the initial loss is small enough. How small
is enough, and how does the bound move with the width M and the tokens n?
This driver measures the basin's edge s* as a phase diagram over (M, n).

The knob: residual-scaled targets (common.residual_scaled_data, as in
lazy.py and ntk_rate.py). With yhat(0) from `mft forward` at the run's own
particles, the targets y(s) = yhat(0) + s (y - yhat(0)) give the initial
residual s r(0) and R(0) = s^2 R0(1), with the same particles and the same
kernel K_all(0) (it does not depend on y): s moves the initial loss along
one direction of residual space, the task's own, and nothing else.

The NTK's rate for that residual. Linearised at K_all(0), Euler's step maps
r to (1 - dtau K/N) r; ntk_rate.linearised_risk gives R_lin after every
step from K_all(0)'s spectrum and r(0), nothing fitted, and T_lin is the
tau at which R_lin first reaches 1e-10 R_lin(0) (the same for every s). A
run is *in the basin* when it reaches R <= 1e-10 R(0) (common.INTERPOLATED)
by tau = T_lin / f, f = 3/4: it converges linearly at no less than three
quarters of the NTK's rate. Its score rho = T_lin / T (T the tau at which
it reaches 1e-10 R(0), log-linear between history rows; a run that does not
reach it: its mean rate log(R(0)/R(end))/tau_end times T_lin / log(1e10));
in the basin exactly when rho >= f. rho -> 1 as s -> 0 (the run becomes the
linearised flow) and rho > 1 where the kernel grows along the run.
The linearised flow's worst case, 2 lambda_min(K_all(0))/N
(ntk_rate.euler_rate of the slowest mode under the same step), and [B]'s
2 lambda_min(K_V(0))/N are printed beside it: rho is against T_lin rather
than a fraction of the worst case, because the residual's weight on
the fast modes makes the run faster than the bound by a factor that
varies by seed (1.26 in the pilot at s = 0.3), which would enter s*.

The edge. For every (M, n, seed) the scales s = 1/8, 1/4, 1/2, 1, 2, 4, 8
are run in that order until the first that is not in the basin; one run at
the geometric midpoint of the last scale in the basin and that first one
halves the bracket (to a factor sqrt 2), and s* is where log rho crosses
log f between the bracket's ends (linear in log s). The basin is the
scales connected to s = 0: rho is not monotone in s (below), and scales
beyond the first failure are not run. s* = 0 when s = 1/8 is already
outside; s* = inf (censored) when s = 8 is still inside.

Setting: the teacher task (4 teacher heads, data.seed = 100 + seed: tokens
and teacher drawn apart from the student's particles), N = 16 sequences,
d = d_h = 8, L = 4, the recorded initial scales (common.RECORDED_SCALES).
Two sweeps through (M, n) = (16, 16): M in {16, 32, 64, 128} at n = 16,
n in {8, 16, 32, 64} at M = 16 (M = 16 because a step at n = 64 costs
about 8 times one at n = 16). Each seed draws its own data and particles.
d is held at 8: a d axis changes the initial scales (section 12) and would
double the cost. Seeds 3..14 (1 and 2: the pilot, excluded).
K_all(0) from `mft ntk --ntk.part all` (with K_V's extreme eigenvalues and
mft's positive-definiteness test); Euler steps dtau = min(0.05, N / (2
lambda_max(K_all(0)))), a quarter of the largest stable step, T_lin / (f
dtau) steps, K_all's lambda_max every 50 steps (`ntk.every`:
/history/euler_dtau_max), a history row every step. The design is nested
(the points of one seed share its draws: heads are drawn from streams keyed
by seed and particle, so M = 16's are the first heads of M = 128's), so the
slopes are fitted seed by seed (stats.per_seed_slopes) and every interval
is the 95 % Student-t interval over the 12 seeds' fits (11 dof).

Criteria, stated before the runs:
  1. a basin exists at every grid point: every seed is in the basin at
     s = 1/8 and leaves it by s = 8 (s* finite and > 0 at every (M, n)).
     [B]'s theorem for an injective K(0) (the sanity check a). Fails if the
     kernel loses a quarter of its rate already at R(0) = R0(1)/64, or if a
     seed never leaves (no edge: the rate never falls a quarter below the
     NTK's up to R(0) = 64 R0(1));
  2. the basin has a width-independent limit, as the mean-field scaling
     says (K_all has a limit in M, and so do [B]'s constants, lambda_min
     and the kernel's sensitivity to the particles): the per-seed slope of
     log s* on log M over M = 16..128 lies within +-1/4. The lazy (NTK)
     scaling would widen the basin like sqrt M (slope 1/2: the kernel moves
     M^-1/2 as much for one residual); +-1/4 splits the two. Fails if s*
     grows (or shrinks) with M by M^1/4 or more over the sweep, or if the
     seeds scatter beyond the band;
  3. the basin has a limit in n, as [B]'s tokens-as-measures model says
     (the attention reads the tokens' empirical measure, which converges,
     and the query readout keeps the sequences apart as the measures
     merge): the per-seed slope of log s* on log n over n = 8..64 lies
     within +-1/4. Fails if the basin shrinks with n at the rate n^-1/2 of
     the empirical measures' fluctuation (a kernel that degenerates as the
     sequences' measures merge) or faster, or grows, or the seeds scatter.
A seed whose s* is 0 or censored at a point of a sweep leaves that sweep's
fit (criterion 1 has then failed; the lines count the seeds fitted).
Sanity checks (the design, must hold):
  a. [B]'s hypothesis: K_V(0) positive definite at every point and seed
     (mft's test, lambda_min(K_V) > 100 N eps lambda_max(K_V));
  b. the residual scaling: R(0) of every training run equals s^2 R0(1) of
     its forward run to 1e-6 (relative; fails if the particles or the
     targets differ from the forward run's);
  c. Euler's step stays stable along every run: dtau below
     /history/euler_dtau_max at every kernel row (fails if the kernel grows
     by 4 times along a run, or a run diverges: then a failure could be
     Euler's, not the flow's).

Power (stats.Plan; the pilot: seeds 1 and 2, excluded). Criteria 2 and 3
are equivalences of band 1/4 about the theory's value 0. The pilot ran
M = 16 and 128 at n = 16, n = 8, 16, 32 at M = 16 (and M = 64 for seed 1),
at s in {0.5, 1, 2, 4}, dtau as here (M = 64 also at s = 0.3, 1, 3, 10 with
dtau = N / (4 lambda_max)), a history row every 5 steps. rho by scale (the
f = 3/4 crossing, s*):
  seed 1: M16 n16: 1: 0.800, 2: 0.658, 4: 0.409 (s* 1.26); M128 n16:
    0.5: 0.778, 1: 0.623, 2: 0.376, 4: 0.312 (s* 0.561); M64 n16: 0.3:
    0.983, 1: 0.746, 2: 0.606, 4: 0.373 (s* 0.98); M16 n8: 0.5: 0.743, 1: 0.688,
    2: 0.353 (s* < 0.5); M16 n32: 0.5: 0.668, 1: 0.739, 2: 0.372 (s* < 0.5);
  seed 2: M16 n16: 1: 0.938, 2: 0.542, 4: 0.632 (s* 1.33); M128 n16:
    1: 0.964, 2: 0.685, 4: 0.795 (s* 1.66); M16 n8: 0.5: 1.155, 1: 0.719,
    2: 0.641 (s* 0.941); M16 n32: 1: 0.874, 2: 0.497 (s* 1.21).
The per-seed slopes of log s* on log M (16 -> 128): -0.388 and 0.109,
spread 0.351: 12 seeds give a half-width of 0.223 against 0.25. On n only
seed 2 has every s* (slope 0.180 over n = 8..32); seed 1's bounds (below
0.5 at n = 8 and 32, 1.26 at 16) put its slope near 0, a spread near 0.13:
criterion 3's plan uses the M pilot's 0.351, the larger and the one
measured. The pilot's mean M slope (-0.14) is not resolved from 0 (its
standard error 0.25): the band is taken about the theory's 0.

What was seen before these were stated: section 8's results (the teacher
at M = 64 leaves its kernel, a 10 % change, at s about 0.1, R(0) = 0.004,
while its risk still falls; at s = 1 and 3 its smallest mean rate over
200 steps is 0.28-0.66 of 2 lambda_min(K_all(0))/N), and the pilot above,
which also set f and the first-crossing rule: at f = 1/2 seed 2's rho rose again from s = 2 to 4 (at
M = 16 and 128) and stayed above 1/2, and seed 1 at M = 64 converged at
s = 10 with rho = 0.81 while its kernel's lambda_max grew 4-fold: far from
its start the kernel can grow and speed the flow up, so a low threshold
measures that regime, not the edge of the NTK's. f = 3/4 puts every pilot
point's edge at s = 0.56..1.66 (seed 1 at n = 8 and 32: below 0.5), before
it.

  python3 scripts/experiments/basin.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft ntk`, `mft forward`): 84 kernels and 84 forward
solves at initialisation, about 500 training runs of 130-400 steps (5-6 a
point and seed). Estimated from the pilot's CPU times (measured under a
load of 13 on the 2 cores): a step at n = 16 costs 5.6 ms at M = 16, 20 ms
at 64, 37 ms at 128; at M = 16 2.4 ms at n = 8, 15 ms at 32 (n = 64: about
45, extrapolated); about 210 CPU seconds a seed, 2500 in all: 21 minutes on
2 free cores, 25-35 on 2 shared ones. Writes basin.csv (a row per M, n and
seed: dtau, K_all(0)'s and K_V(0)'s extreme eigenvalues, [B]'s bound
2 lambda_min(K_V)/N and mft's test of K_V, R0(1), T_lin, the linearised
flow's mean rate over Euler's 2 lambda_min(K_all(0))/N, the runs made, the
bracket's scales and rho, s*, R0* = s*^2 R0(1), the smallest
euler_dtau_max / dtau, the largest identity gap, diverged runs; the runs of
each row) and exp_basin.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
from pathlib import Path

import numpy as np

import common
import stats
from common import Run
from ntk_rate import euler_rate, linearised_risk

TASK = {"data.task": "teacher", "data.teacher_heads": 4}
DATA_SEED = 100   # data.seed = DATA_SEED + seed
FULL = dict(widths=[16, 32, 64, 128], at_n=16, tokens=[8, 16, 32, 64], at_M=16, seeds=list(range(3, 15)), L=4,
            N=16, scales=[0.125, 0.25, 0.5, 1, 2, 4, 8], refine=True, ntk_every=50)
QUICK = dict(widths=[8, 16], at_n=8, tokens=[8, 16], at_M=8, seeds=[1, 2], L=2, N=8, scales=[0.0625, 0.25, 1, 4],
             refine=False, ntk_every=10)
FRACTION = 0.75            # in the basin: R <= LEVEL R(0) by tau = T_lin / FRACTION
LEVEL = common.INTERPOLATED
BAND = 0.25                # criteria 2 and 3: the slope within +-BAND
IDENTITY = 1e-6            # sanity b
LONGEST = 200_000          # steps of the linearised flow searched for T_lin
# The pilot (seeds 1, 2): per-seed slopes of log s* on log M (16 -> 128).
PILOT = dict(seeds=2, M_slopes=[-0.388, 0.109])
COLUMNS = ["M", "n", "seed", "N", "dtau", "all_min", "all_max", "V_min", "V_max", "V_bound", "V_definite",
           "risk_one", "t_lin", "lin_over_bound", "runs_made", "scale_in", "rho_in", "scale_out", "rho_out",
           "scale_star", "risk_star", "euler_margin", "identity", "diverged"]


def points(size):
    """(M, n) of the grid: the M sweep at n = at_n, then the n sweep at M = at_M."""
    out = [(M, size["at_n"]) for M in size["widths"]]
    return out + [(size["at_M"], n) for n in size["tokens"] if (size["at_M"], n) not in out]


def crossing_time(tau, risk, level=LEVEL):
    """The tau at which risk first reaches level risk[0], log-linear between
    rows (inf if it never does)."""
    below = np.nonzero(risk <= level * risk[0])[0]
    if not below.size:
        return np.inf
    i = below[0]
    if i == 0:
        return float(tau[0])
    a, b = np.log(risk[i - 1]), np.log(risk[i])
    return float(tau[i - 1] + (a - np.log(level * risk[0])) / (a - b) * (tau[i] - tau[i - 1]))


def linearised_time(gram, residual, dtau, N):
    """T_lin: when the Euler map of the flow linearised at `gram` brings R to
    LEVEL R(0) (inf beyond LONGEST steps)."""
    lam_min = max(float(np.linalg.eigvalsh(gram)[0]), 0.0)
    factor = 1 - dtau * lam_min / N
    # the slowest mode alone bounds the steps needed: factor^(2 n) <= LEVEL
    bound = np.log(LEVEL) / (2 * np.log(factor)) if 0 < factor < 1 else np.inf
    if not bound < LONGEST:
        return np.inf
    steps = np.arange(int(np.ceil(bound)) + 2)
    return crossing_time(steps * dtau, linearised_risk(gram, residual, dtau, N, steps))


def start(size, options):
    """Kernels and forward solves at initialisation; {key: setup}, key = (M, n, seed)."""
    import h5py
    keys = [(M, n, seed) for M, n in points(size) for seed in size["seeds"]]

    def model(M, n, seed):
        return {**TASK, "data.sequences": size["N"], "data.tokens": n, "data.seed": DATA_SEED + seed,
                "model.heads": M, "model.slices": size["L"], "init.seed": seed}

    runs = [Run(f"M{M}-n{n}-s{seed}-ntk", {**model(M, n, seed), "ntk.part": "all"}, command="ntk")
            for M, n, seed in keys]
    runs += [Run(f"M{M}-n{n}-s{seed}-forward", model(M, n, seed), command="forward") for M, n, seed in keys]
    paths = common.execute("basin", runs, options)
    setup = {}
    for M, n, seed in keys:
        kernel, forward = paths[f"M{M}-n{n}-s{seed}-ntk"], paths[f"M{M}-n{n}-s{seed}-forward"]
        with h5py.File(kernel, "r") as f:
            gram, a = f["ntk/gram"][()], dict(f["ntk"].attrs)
        with h5py.File(forward, "r") as f:
            residual = (f["forward/predictions"][()] - f["data/targets"][()]).ravel()
            risk_one = float(f["forward"].attrs["risk"])
        N = size["N"]
        dtau = float(f"{min(0.05, N / (2 * float(a['lambda_max']))):.2g}")
        t_lin = linearised_time(gram, residual, dtau, N)
        setup[(M, n, seed)] = dict(
            forward=forward, origin=[kernel, forward], dtau=dtau, t_lin=t_lin, risk_one=risk_one,
            steps=int(np.ceil(t_lin / (FRACTION * dtau))) if np.isfinite(t_lin) else 0,
            all_min=float(a["lambda_min"]), all_max=float(a["lambda_max"]), V_min=float(a["kv_lambda_min"]),
            V_max=float(a["kv_lambda_max"]), V_definite=int(a["kv_positive_definite"]),
            V_bound=float(a["rate_bound"]),
            # the linearised flow's mean rate to LEVEL over the worst case of its slowest mode
            lin_over_bound=np.log(1 / LEVEL) / t_lin / euler_rate(float(a["lambda_min"]) / N, dtau))
    return setup


def train_run(key, scale, setup, size, folder):
    M, n, seed = key
    data = common.residual_scaled_data(setup["forward"], folder, f"M{M}-n{n}-s{seed}-x{scale:g}", scale)
    return Run(f"M{M}-n{n}-s{seed}-x{scale:g}",
               {"data.task": "file", "data.file": str(data), "model.heads": M, "model.slices": size["L"],
                "init.seed": seed, "train.steps": setup["steps"], "train.dtau": setup["dtau"],
                "ntk.every": size["ntk_every"], "output.history_every": 1, "output.snapshot_every": setup["steps"]})


def measure(path, scale, setup):
    """One training run: rho, in the basin, the smallest euler_dtau_max /
    dtau, the identity gap |R(0) - s^2 R0(1)| / (s^2 R0(1))."""
    if path is None:  # diverged: out of the basin, and Euler's step was not stable
        return dict(scale=scale, rho=0.0, inside=False, euler=0.0, identity=np.nan, diverged=1, path=None)
    h, _ = common.history(path)
    risk, tau = np.asarray(h["risk"], float), np.asarray(h["tau"], float)
    t_hit = crossing_time(tau, risk)
    if np.isfinite(t_hit):
        rho = setup["t_lin"] / t_hit
    else:
        rho = np.log(risk[0] / risk[-1]) / tau[-1] * setup["t_lin"] / np.log(1 / LEVEL)
    stable = np.asarray(h["euler_dtau_max"], float)
    expected = scale ** 2 * setup["risk_one"]
    return dict(scale=scale, rho=float(rho), inside=bool(rho >= FRACTION),
                euler=float(np.min(stable[np.isfinite(stable)]) / setup["dtau"]),
                identity=abs(risk[0] - expected) / expected, diverged=0, path=path)


def scan(size, setup, options, folder):
    """The scales of every key in order up to its first failure, then the
    midpoint round; {key: [measurement, ...]} in the order run."""
    results = {key: [] for key in setup}
    pending = {key: 0 for key in setup if setup[key]["steps"] > 0}

    def round_of(todo):
        runs = {key: train_run(key, scale, setup[key], size, folder) for key, scale in todo.items()}
        paths = common.execute("basin", list(runs.values()), options)
        for key, run in runs.items():
            results[key].append(measure(paths.get(run.name), todo[key], setup[key]))

    while pending:
        round_of({key: size["scales"][i] for key, i in pending.items()})
        pending = {key: i + 1 for key, i in pending.items()
                   if results[key][-1]["inside"] and i + 1 < len(size["scales"])}
    if size["refine"]:
        middle = {}
        for key, found in results.items():
            inside, outside = bracket(found)
            if inside and outside:
                middle[key] = float(f"{np.sqrt(inside['scale'] * outside['scale']):.4g}")
        if middle:
            round_of(middle)
    return results


def bracket(found):
    """(the largest scale in the basin below the first failure, the first
    failure): measurements, either None."""
    outside = min((m for m in found if not m["inside"]), key=lambda m: m["scale"], default=None)
    below = [m for m in found if m["inside"] and (outside is None or m["scale"] < outside["scale"])]
    return max(below, key=lambda m: m["scale"], default=None), outside


def edge(found):
    """s*: where log rho crosses log f between the bracket's ends (0: the
    first scale is outside; inf: none is)."""
    inside, outside = bracket(found)
    if outside is None:
        return np.inf if found else np.nan
    if inside is None:
        return 0.0
    if outside["rho"] <= 0:
        return inside["scale"]
    t = np.log(inside["rho"] / FRACTION) / np.log(inside["rho"] / outside["rho"])
    return float(inside["scale"] * (outside["scale"] / inside["scale"]) ** t)


def table(size, setup, results):
    rows = []
    for key, s in setup.items():
        M, n, seed = key
        found = results[key]
        inside, outside = bracket(found)
        star = edge(found)
        rows.append({"M": M, "n": n, "seed": seed, "N": size["N"],
                     **{k: s[k] for k in ("dtau", "all_min", "all_max", "V_min", "V_max", "V_bound", "V_definite",
                                          "risk_one", "t_lin", "lin_over_bound")},
                     "runs_made": len(found), "scale_in": inside["scale"] if inside else np.nan,
                     "rho_in": inside["rho"] if inside else np.nan,
                     "scale_out": outside["scale"] if outside else np.nan,
                     "rho_out": outside["rho"] if outside else np.nan, "scale_star": star,
                     "risk_star": star ** 2 * s["risk_one"],
                     "euler_margin": min((m["euler"] for m in found), default=np.nan),
                     "identity": max((m["identity"] for m in found if np.isfinite(m["identity"])), default=np.nan),
                     "diverged": sum(m["diverged"] for m in found),
                     "runs": s["origin"] + [m["path"] for m in found if m["path"] is not None]})
    return rows


def slopes(rows, seeds, axis, values, fixed):
    """The per-seed fit of log s* on log `axis` over `values` (the other
    axis at `fixed`) over the seeds whose every s* is finite and > 0, and
    those seeds (None with fewer than two)."""
    other = "n" if axis == "M" else "M"
    star = {(r["seed"], r[axis]): r["scale_star"] for r in rows if r[other] == fixed}
    whole = [s for s in seeds if all(0 < star.get((s, v), np.nan) < np.inf for v in values)]
    if len(whole) < 2:
        return None, whole
    return stats.per_seed_slopes(values, [[star[(s, v)] for v in values] for s in whole]), whole


def criteria(size, rows):
    seeds = size["seeds"]
    spread = float(np.std(PILOT["M_slopes"], ddof=1))
    lines = [stats.Plan(f"the per-seed slope of log s* on log M within +-{BAND:g}", BAND, spread,
                        PILOT["seeds"], len(seeds)).line(),
             stats.Plan(f"the per-seed slope of log s* on log n within +-{BAND:g} (the M pilot's spread)", BAND,
                        spread, PILOT["seeds"], len(seeds)).line()]
    definite = [r for r in rows if r["V_definite"]]
    lines.append(common.sanity(
        "[B]'s hypothesis: K_V(0) positive definite at every point and seed (mft's test)", len(definite) == len(rows),
        f"{len(definite)} of {len(rows)}; lambda_min(K_V) {min(r['V_min'] for r in rows):.3g}.."
        f"{max(r['V_min'] for r in rows):.3g}, lambda_min(K_all) {min(r['all_min'] for r in rows):.3g}.."
        f"{max(r['all_min'] for r in rows):.3g}"))
    gaps = [r["identity"] for r in rows if np.isfinite(r["identity"])]
    lines.append(common.sanity(
        f"the residual scaling: R(0) of every training run equals s^2 R0(1) to {IDENTITY:g}",
        bool(gaps) and len(gaps) == len(rows) and max(gaps) < IDENTITY,
        f"largest relative gap {max(gaps, default=np.nan):.2g} over {sum(r['runs_made'] for r in rows)} runs"))
    margins = [r["euler_margin"] for r in rows]
    diverged = sum(r["diverged"] for r in rows)
    lines.append(common.sanity(
        "Euler's step stays stable along every run: dtau below /history/euler_dtau_max at every kernel row, "
        "no run diverged", diverged == 0 and all(np.isfinite(m) and m > 1 for m in margins),
        f"smallest euler_dtau_max / dtau {np.nanmin(margins):.3g} (about 4 at the start); {diverged} diverged"))
    stars = [r["scale_star"] for r in rows]
    first = sum(r["scale_star"] > 0 for r in rows)
    edged = sum(r["scale_star"] < np.inf for r in rows)
    finite = [x for x in stars if 0 < x < np.inf]
    risks = [r["risk_star"] for r in rows if 0 < r["scale_star"] < np.inf]
    lines.append(common.criterion(
        f"a basin at every grid point: every seed in the basin (R <= {LEVEL:g} R(0) by T_lin / {FRACTION:g}) at "
        f"s = {size['scales'][0]:g} and out of it by s = {size['scales'][-1]:g}",
        len(finite) == len(rows),
        f"{first} of {len(rows)} in at s = {size['scales'][0]:g}, {edged} leave; s* "
        + (f"{min(finite):.3g}..{max(finite):.3g}, R0* {min(risks):.3g}..{max(risks):.3g}" if finite else "none")))
    for axis, values, fixed, name in (("M", size["widths"], size["at_n"], "width-independent"),
                                      ("n", size["tokens"], size["at_M"], "token-independent")):
        fit, whole = slopes(rows, seeds, axis, values, fixed)
        slope = fit["slope"] if fit else None
        lines.append(common.criterion(
            f"a {name} basin: the per-seed slope of log s* on log {axis} over {axis} = {values[0]}..{values[-1]} "
            f"({'n' if axis == 'M' else 'M'} = {fixed}) lies within +-{BAND:g}",
            slope is not None and -BAND <= slope.low and slope.high <= BAND,
            (f"slope {slope.text()}, per seed " + ", ".join(f"{x:.3f}" for x in fit.estimates[:, 1])
             if slope else f"{len(whole)} seeds with every s* finite: no interval") + "; geometric mean s* "
            + ", ".join(f"{mean_star(rows, axis, v, fixed)} ({axis} = {v})" for v in values)))
    return lines


def mean_star(rows, axis, value, fixed):
    """The geometric mean of s* over the seeds at one grid point, with its
    t-interval (on log s*), as text."""
    other = "n" if axis == "M" else "M"
    found = [r["scale_star"] for r in rows if r[axis] == value and r[other] == fixed]
    finite = [np.log(x) for x in found if 0 < x < np.inf]
    if len(finite) < 2:
        return "no interval"
    i = stats.t_interval(finite)
    return f"{np.exp(i.value):.3g} [{np.exp(i.low):.3g}, {np.exp(i.high):.3g}]"


def plot(size, rows, results, options):
    """(a) rho against s, every run, by grid point; (b) s* against M; (c) s*
    against n (seeds and geometric means with t-intervals); (d) R0* against
    lambda_min(K_all(0)), every seed and point."""
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    (a, b), (c, d) = axes
    grid = points(size)
    for i, (M, n) in enumerate(grid):
        for j, r in enumerate(r for r in rows if r["M"] == M and r["n"] == n):
            found = sorted(results[(M, n, r["seed"])], key=lambda m: m["scale"])
            a.plot([m["scale"] for m in found], [max(m["rho"], 1e-3) for m in found], "o-", ms=2, lw=0.7,
                   color=f"C{i}", alpha=0.6, label=f"M = {M}, n = {n}" if j == 0 else None)
    a.axhline(FRACTION, color="k", lw=0.8, ls="--", label=f"f = {FRACTION:g}")
    a.set_xscale("log")
    a.set_xlabel("residual scale s (R(0) = s² R0(1))")
    a.set_ylabel("ρ = T_lin / T(R = 1e-10 R(0))")
    a.set_title("every run: in the basin where ρ ≥ f", fontsize=9)
    for ax, axis, values, fixed in ((b, "M", size["widths"], size["at_n"]), (c, "n", size["tokens"], size["at_M"])):
        other = "n" if axis == "M" else "M"
        for seed in size["seeds"]:
            mine = {r[axis]: r["scale_star"] for r in rows if r["seed"] == seed and r[other] == fixed}
            ax.plot(values, [mine.get(v, np.nan) if 0 < mine.get(v, np.nan) < np.inf else np.nan for v in values],
                    "-", color="0.7", lw=0.6)
        means, lows, highs = [], [], []
        for v in values:
            logs = [np.log(r["scale_star"]) for r in rows if r[axis] == v and r[other] == fixed
                    and 0 < r["scale_star"] < np.inf]
            i = stats.t_interval(logs) if len(logs) >= 2 else None
            means.append(np.exp(i.value) if i else np.nan)
            lows.append(np.exp(i.value) - np.exp(i.low) if i else 0)
            highs.append(np.exp(i.high) - np.exp(i.value) if i else 0)
        ax.errorbar(values, means, yerr=[lows, highs], fmt="ko-", ms=4, capsize=3, label="geometric mean (95 % t)")
        for power, style in ((BAND, ":"), (-BAND, ":")):
            if np.isfinite(means[0]):
                ax.plot(values, means[0] * (np.asarray(values, float) / values[0]) ** power, "C3" + style, lw=0.8,
                        label=f"slopes ±{BAND:g}" if power > 0 else None)
        ax.set_xscale("log")
        ax.set_xticks(values, [str(v) for v in values])
        ax.set_title(f"{'2' if axis == 'M' else '3'}. the basin's edge against {axis}", fontsize=9)
        if any(0 < r["scale_star"] < np.inf for r in rows):  # (log axes need a positive value)
            ax.set_yscale("log")
        ax.set_xlabel(f"{axis} ({other} = {fixed})")
        ax.set_ylabel("s* (edge of the basin)")
    for i, (M, n) in enumerate(grid):
        mine = [r for r in rows if r["M"] == M and r["n"] == n and 0 < r["scale_star"] < np.inf]
        d.plot([r["all_min"] for r in mine], [r["risk_star"] for r in mine], "o", ms=3, color=f"C{i}",
               label=f"M = {M}, n = {n}")
    if any(0 < r["scale_star"] < np.inf for r in rows):
        d.set_xscale("log")
        d.set_yscale("log")
    d.set_xlabel("λ_min(K_all(0))")
    d.set_ylabel("R0* = s*² R0(1)")
    d.set_title("the basin's initial loss against the NTK's λ_min", fontsize=9)
    common.finish_axes(axes.ravel(), legend_size=6)
    common.save_figure(fig, "basin", options)


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "basin", "`mft ntk` and `mft forward`")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("basin" + ("-quick" if options.quick else ""))
    setup = start(size, options)
    results = scan(size, setup, options, folder)
    rows = table(size, setup, results)
    common.write_csv("basin", options, COLUMNS, rows)
    plot(size, rows, results, options)
    lines = criteria(size, rows)
    for M, n in points(size):
        mine = [r for r in rows if r["M"] == M and r["n"] == n]
        print(f"measured: M = {M}, n = {n}: s* {mean_star(rows, 'M', M, n)} (geometric mean); s* by seed "
              + ", ".join(f"{r['scale_star']:.3g}" for r in mine) + "; R0(1) "
              f"{np.mean([r['risk_one'] for r in mine]):.3g}; lambda_min(K_all(0)) "
              f"{min(r['all_min'] for r in mine):.3g}..{max(r['all_min'] for r in mine):.3g}; [B]'s "
              f"2 lambda_min(K_V)/N {min(r['V_bound'] for r in mine):.3g}..{max(r['V_bound'] for r in mine):.3g}; "
              "the linearised "
              f"flow's mean rate over Euler's 2 lambda_min(K_all)/N {min(r['lin_over_bound'] for r in mine):.3g}.."
              f"{max(r['lin_over_bound'] for r in mine):.3g}")
    faster = [m for found in results.values() for m in found if m["rho"] > 1]
    print(f"measured: {len(faster)} of {sum(len(f) for f in results.values())} runs beat the linearised flow "
          f"(rho > 1), largest rho {max((m['rho'] for m in faster), default=np.nan):.3g}")
    common.write_criteria("basin", options, lines)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

#!/usr/bin/env python3
"""Mean-field Langevin at stationarity, with the step taken to zero. Each
particle follows d theta = -(M L) dR/d theta dtau + sqrt(2 T) dW, so the
particles' stationary law is proportional to exp(-M L R(theta) / T). Near a
minimum where the model fits the data (R = 0), R is quadratic in the N d_out
directions the predictions span (Gauss-Newton: the Hessian of M L R has the
eigenvalues kappa_i = lambda_i(K_all) / N of the NTK, rank N d_out) and flat
in the others, and equipartition gives

    E[R] = T N d_out / (2 M L),

linear in T with a prefactor that counts the data, not the parameters.

mft integrates with Euler-Maruyama, whose chain does not sample that law:
along a mode of eigenvalue kappa its stationary spread is the continuous
one times 1/(1 - dtau kappa / 2), so in the quadratic model the measured
ratio R* / (T N d_out / (2 M L)) is

    r(dtau) = mean_i 1 / (1 - dtau kappa_i / 2) = 1 + dtau mean(kappa) / 2 + O(dtau^2),

the Euler-Maruyama model below (kappa_i from each seed's kernel at its
minimum). The sweep measures the ratio at three steps and extrapolates it to
dtau -> 0 seed by seed, and so the power of R* against T.

Setting: the teacher task (N = 16, d_out = 1, 4 teacher heads), M = 64,
L = 4, seeds 1..8. dtau_0 = min(0.02, N / (4 lambda_max(K_all(0)))), the
largest lambda_max over the seeds (one step for all). Per seed the flow
(T = 0) runs from the drawn particles to tau = 8 at dtau_0; from its last
particles (the warm start, shared by every run of the seed) Langevin runs
at T in {1e-5, 1e-4, 1e-3} and dtau in {2, 1, 1/2} dtau_0, to tau = 10.
R* is the mean of R over tau in [2, 10]: the burn-in of 2 is nine times
1/(2 kappa_min), the time in which the slowest stiff mode's spread relaxes
(printed per seed). The stationarity test compares the window's two halves,
each with its error from 10 batch means (batches of 0.4 in tau, longer than
that time). The steps are 2, 1, 1/2 times dtau_0 rather than 1, 1/2, 1/4:
a run costs 1/dtau, the quarter alone as much as four runs at dtau_0, and
the extrapolation's variance at dtau = 0 is the same for any geometric set
of steps, while the slope r1 is resolved four times better. The price is
curvature: the line through the model's r at these steps lands at
1 - 0.005 (printed per seed), well inside the intervals expected; and at
2 dtau_0 the stiffest mode has dtau kappa near 0.5, far from the chain's
limit 2 (printed).

Per seed and T, ratio = r0 + r1 dtau by least squares over the three steps
(the runs of one seed share its warm start and, at one step, its noise at
every T, the stream being keyed by seed and step: a nested design, fitted
seed by seed).
Per seed and step, p is the log-log slope of R* against T, and
p = p0 + p1 dtau. Every interval is the 95 % Student-t interval over the
seeds' fits (7 dof with 8 seeds).

Criteria, stated before the runs:
  1. equipartition at dtau -> 0: at the smallest T, r0's interval contains 1,
     with a half-width under 0.1 (so that it cannot hold by imprecision);
  2. R* is linear in T at dtau -> 0: p0's interval contains 1, with a
     half-width under 0.05;
  3. every Langevin run is stationary: the means of R over the two halves of
     its window differ by less than q combined batch-mean errors, q the
     two-sided Student-t quantile at level 1 - 0.05/n with 18 dof (n the
     number of runs: Bonferroni, so that all n pass together 95 % of the
     time when every run is stationary; with n = 72 a fixed bound of 3
     would fail 43 % of sweeps of stationary runs);
  4. the warm start is a minimum and the baseline lies far below: every
     seed's flow ends with R under a tenth of T N / (2 M L) at the
     smallest T;
  5. the step's effect is Euler-Maruyama's: at the smallest T, the paired
     difference between r1 dtau_0 and the same line's slope fitted to the
     model's r at the same steps (each seed's kernel at its minimum) has an
     interval containing 0.

What was seen before these were stated: the earlier design's results (three
seeds from the drawn particles, dtau_0 = 0.0076 only, tau = 20: ratios 1.065
at T = 1e-5 rising to 1.231 at 1e-3, R*'s seed spread 1.7-3.8 % in standard
error, power 1.033 +- 0.007 pooled); one full-size flow (seed 1, dtau 0.0076,
tau = 10, 31 s of CPU for 1316 steps): R 0.46, 1.6e-6 at tau = 2, 3.4e-12
at 5, 7.2e-18 at 8, falling by e^-4.4 a unit of tau at the end; its kernel
at the end: kappa from 2.16 to 35.1, mean 11.5, the model's r 1.101, 1.047,
1.023 at 2, 1, 1/2 times 0.0076 (at the drawn particles 1.131, 1.061, 1.029)
and the line through them at 0.9955; the time-average error this spectrum
implies for R over a window of 8, sqrt(sum 2 / (kappa_i 8)) / N = 4.6 %,
from which r0's half-width is expected near 0.05 and r1 dtau_0's near 0.04
(the model's 0.053). No Langevin run at full size was made.

  python3 scripts/experiments/langevin.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft ntk` runs set the step and the model). 96 runs,
119,000 steps at dtau_0 = 0.0076; at the earlier full run's rate (0.041 s a
step on each of 2 cores, measured with the noise; the flows are faster)
about 40 minutes on 2 cores, more in proportion if a seed's
lambda_max(K_all(0)) exceeds 525 and so shortens dtau_0. Writes langevin.csv
(the ratio with its interval and the model's at every T and step, dtau = 0
the extrapolation; the power at every step; the flows' risk) and
exp_langevin.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import numpy as np

import common
import stats
from common import Run

FULL = dict(seeds=list(range(1, 9)), M=64, L=4, N=16, dtau=0.02, flow_tau=8.0, tau=10.0, burn=2.0,
            temperatures=[1e-5, 1e-4, 1e-3])
QUICK = dict(seeds=[1, 2], M=8, L=2, N=8, dtau=0.02, flow_tau=1.0, tau=1.0, burn=0.2, temperatures=[1e-4, 1e-3])
STEPS = (2.0, 1.0, 0.5)  # dtau / dtau_0
BATCHES = 10
FAMILY = 0.05            # criterion 3: the chance that some stationary run fails it
RATIO_HALF_WIDTH = 0.1   # criterion 1
POWER_HALF_WIDTH = 0.05  # criterion 2
FLOOR = 0.1              # criterion 4: the flow's R against the smallest prediction
COLUMNS = ["quantity", "T", "dtau", "seeds", "diverged", "value", "low", "high", "model", "risk", "stationarity"]


def batch_mean(x):
    """The mean and its error from BATCHES batch means."""
    means = np.array([c.mean() for c in np.array_split(x, BATCHES)])
    return float(x.mean()), float(means.std(ddof=1) / np.sqrt(len(means)))


def stationary_mean(history, burn):
    """(R*, the mean of R over tau >= burn; the stationarity statistic
    |mean(first half) - mean(second half)| / their combined batch-means
    error)."""
    risk = np.asarray(history["risk"], float)[np.asarray(history["tau"]) >= burn]
    (m1, e1), (m2, e2) = batch_mean(risk[:len(risk) // 2]), batch_mean(risk[len(risk) // 2:])
    return float(risk.mean()), abs(m1 - m2) / max(np.hypot(e1, e2), 1e-300)


def model_ratio(kappa, dtau):
    """Euler-Maruyama's stationary excess in the quadratic model: the mean
    over the stiff modes of 1 / (1 - dtau kappa / 2); inf past stability."""
    h = dtau * np.asarray(kappa) / 2
    return float(np.mean(1 / (1 - h))) if np.all(h < 1) else np.inf


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "langevin")
    size = QUICK if options.quick else FULL
    import h5py

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
    dtaus = np.array(STEPS) * dtau0
    flow_steps = int(round(size["flow_tau"] / dtau0))
    print(f"[langevin] dtau_0 = {dtau0:g} (largest lambda_max(K_all(0)) {top:.4g}); steps "
          + ", ".join(f"{d:g} ({int(round(size['tau'] / d))} steps)" for d in dtaus), flush=True)
    # The flow's file is named by its length, so that a changed flow is a
    # new warm start and the runs that start from it are redone.
    flow = {s: f"s{s}-flow-k{flow_steps}" for s in seeds}
    flows = [Run(flow[s], {**base(s), "train.temperature": 0.0, "train.steps": flow_steps, "train.dtau": dtau0,
                           "output.snapshot_every": flow_steps}) for s in seeds]
    paths.update(common.execute("langevin", flows, options))
    started = [s for s in seeds if flow[s] in paths]
    name = lambda T, x, s: f"T{T:g}-x{x:g}-s{s}"
    minima = [Run(f"s{s}-ntkmin", {"from": paths[flow[s]], "snapshot": -1, "ntk.part": "all"}, command="ntk")
              for s in started]
    hot = [Run(name(T, x, s), {**base(s), "init.file": str(paths[flow[s]]), "train.temperature": T,
                               "train.steps": int(round(size["tau"] / (x * dtau0))), "train.dtau": x * dtau0,
                               "output.snapshot_every": int(round(size["tau"] / (x * dtau0)))})
           for s in started for T in temperatures for x in STEPS]
    paths.update(common.execute("langevin", minima + hot, options))

    measured = {}  # (T, x, seed): (R*, stationarity)
    for T in temperatures:
        for x in STEPS:
            for s in started:
                if name(T, x, s) in paths:
                    measured[T, x, s] = stationary_mean(common.history(paths[name(T, x, s)])[0], size["burn"])
    # A seed enters the fits only with every run of it finished (its curves
    # are nested); the others are counted as diverged.
    complete = [s for s in started if all((T, x, s) in measured for T in temperatures for x in STEPS)]
    kappa = {}
    for s in complete:
        with h5py.File(paths[f"s{s}-ntkmin"], "r") as f:
            kappa[s] = np.asarray(f["ntk/eigenvalues"][()], float) / N
    flow_risk = [float(common.history(paths[flow[s]])[0]["risk"][-1]) for s in started]
    rows, lines = analyse(size, dtau0, measured, complete, kappa, flow_risk)
    common.write_csv("langevin", options, COLUMNS, rows)
    common.write_criteria("langevin", options, lines)
    plot(rows, measured, kappa, size, dtau0, complete, options)


def analyse(size, dtau0, measured, seeds, kappa, flow_risk):
    """The CSV's rows and the criteria lines."""
    temperatures, N, ML = size["temperatures"], size["N"], size["M"] * size["L"]
    total = len(size["seeds"])
    x = np.array(STEPS)
    predicted = {T: T * N / (2 * ML) for T in temperatures}
    ratio = {T: np.array([[measured[T, xj, s][0] / predicted[T] for xj in STEPS] for s in seeds]) for T in temperatures}
    model = np.array([[model_ratio(kappa[s], xj * dtau0) for xj in STEPS] for s in seeds])
    rows = [{"quantity": "flow_risk", "T": 0.0, "dtau": dtau0, "seeds": len(flow_risk),
             "diverged": total - len(flow_risk), "value": max(flow_risk, default=np.nan), "low": np.nan,
             "high": np.nan, "model": np.nan, "risk": np.mean(flow_risk) if flow_risk else np.nan,
             "stationarity": np.nan}]
    enough = len(seeds) >= 2
    fits, powers = {}, None
    for T in temperatures:
        if enough:
            # x = dtau / dtau_0, so the slope is r1 dtau_0: the excess at dtau_0.
            fits[T] = stats.per_seed_fits([np.ones_like(x), x], ratio[T], ("r0", "excess"))
        for j, xj in enumerate(STEPS):
            found = [s for s in size["seeds"] if (T, xj, s) in measured]
            iv = stats.t_interval(ratio[T][:, j]) if enough else None
            rows.append({"quantity": "ratio", "T": T, "dtau": xj * dtau0, "seeds": len(seeds),
                         "diverged": total - len(found), "value": iv.value if iv else np.nan,
                         "low": iv.low if iv else np.nan, "high": iv.high if iv else np.nan,
                         "model": float(np.mean(model[:, j])) if enough else np.nan,
                         "risk": float(np.mean([measured[T, xj, s][0] for s in found])) if found else np.nan,
                         "stationarity": max((measured[T, xj, s][1] for s in found), default=np.nan)})
        r0 = fits[T]["r0"] if enough else None
        model_r0 = [np.polyfit(x, m, 1)[1] if np.all(np.isfinite(m)) else np.nan for m in model]
        rows.append({"quantity": "ratio", "T": T, "dtau": 0.0, "seeds": len(seeds), "diverged": total - len(seeds),
                     "value": r0.value if r0 else np.nan, "low": r0.low if r0 else np.nan,
                     "high": r0.high if r0 else np.nan, "model": float(np.mean(model_r0)) if enough else np.nan,
                     "risk": r0.value * predicted[T] if r0 else np.nan, "stationarity": np.nan})
    if enough:
        # Per seed and step, the power of R* against T; then its line in dtau.
        slopes = [stats.per_seed_slopes(temperatures, np.array([[measured[T, xj, s][0] for T in temperatures]
                                                                  for s in seeds])) for xj in STEPS]
        P = np.column_stack([f.estimates[:, 1] for f in slopes])
        powers = stats.per_seed_fits([np.ones_like(x), x], P, ("p0", "p1"))
        for j, xj in enumerate(STEPS):
            rows.append(power_row(xj * dtau0, len(seeds), total, slopes[j]["slope"]))
        rows.append(power_row(0.0, len(seeds), total, powers["p0"]))
    else:
        for d in list(x * dtau0) + [0.0]:
            rows.append(power_row(d, len(seeds), total, None))
    return rows, criteria(size, dtau0, measured, seeds, kappa, flow_risk, fits, powers, model, ratio, predicted)


def power_row(dtau, seeds, total, iv):
    return {"quantity": "power", "T": np.nan, "dtau": dtau, "seeds": seeds, "diverged": total - seeds,
            "value": iv.value if iv else np.nan, "low": iv.low if iv else np.nan, "high": iv.high if iv else np.nan,
            "model": 1.0, "risk": np.nan, "stationarity": np.nan}


def criteria(size, dtau0, measured, seeds, kappa, flow_risk, fits, powers, model, ratio, predicted):
    temperatures = size["temperatures"]
    cold = temperatures[0]
    few = f"{len(seeds)} complete seeds of {len(size['seeds'])}: no interval"
    lines = []
    text = (f"equipartition at dtau -> 0: at T = {cold:g} the per-seed r0 of R*/(T N/(2 M L)) = r0 + r1 dtau has an "
            f"interval containing 1, half-width under {RATIO_HALF_WIDTH:g}")
    if fits:
        r0 = fits[cold]["r0"]
        lines.append(common.criterion(
            text, r0.contains(1.0) and r0.half_width < RATIO_HALF_WIDTH,
            f"r0 {r0.text()}; at the other T " + ", ".join(f"{fits[T]['r0'].text()} (T = {T:g})"
                                                          for T in temperatures[1:])
            + "; measured at dtau_0 " + ", ".join(f"{ratio[T][:, STEPS.index(1.0)].mean():.3f} (T = {T:g})"
                                                  for T in temperatures)))
    else:
        lines.append(common.criterion(text, False, few))
    text = (f"R* linear in T at dtau -> 0: the per-seed p0 of p = p0 + p1 dtau (p the log-log slope of R* against T "
            f"over T = {temperatures[0]:g}..{temperatures[-1]:g}) has an interval containing 1, half-width under "
            f"{POWER_HALF_WIDTH:g}")
    if powers:
        p0 = powers["p0"]
        lines.append(common.criterion(text, p0.contains(1.0) and p0.half_width < POWER_HALF_WIDTH,
                                      f"p0 {p0.text()}; p1 dtau_0 {powers['p1'].value:.4f}"))
    else:
        lines.append(common.criterion(text, False, few))
    n = len(temperatures) * len(STEPS) * len(size["seeds"])
    dof = 2 * (BATCHES - 1)
    q = stats.t_quantile(1 - FAMILY / n, dof)
    worst = {T: max((v[1] for k, v in measured.items() if k[0] == T), default=np.nan) for T in temperatures}
    lines.append(common.criterion(
        f"every Langevin run is stationary: the two halves of its window agree within {q:.2f} combined batch-mean "
        f"errors (two-sided t quantile at 1 - {FAMILY:g}/{n}, {dof} dof)",
        len(measured) == n and all(v[1] < q for v in measured.values()),
        f"{len(measured)} of {n} runs finished; largest statistic "
        + ", ".join(f"{worst[T]:.2f} (T = {T:g})" for T in temperatures)))
    floor = FLOOR * predicted[cold]
    lines.append(common.criterion(
        f"every seed's flow (T = 0, the warm start) ends below {FLOOR:g} of T N/(2 M L) at T = {cold:g}",
        len(flow_risk) == len(size["seeds"]) and max(flow_risk) < floor,
        f"largest R_flow {max(flow_risk, default=np.nan):.2e} against {floor:.2e} ({len(flow_risk)} flows)"))
    text = (f"the step's effect is Euler-Maruyama's: at T = {cold:g} the paired difference of r1 dtau_0 and the model "
            "line's (fitted to mean_i 1/(1 - dtau kappa_i/2) at the same steps, kappa_i from each seed's kernel at "
            "its minimum) has an interval containing 0")
    x = np.array(STEPS)
    if fits and np.all(np.isfinite(model)):
        model_excess = np.array([np.polyfit(x, m, 1)[0] for m in model])
        excess = fits[cold].estimates[:, 1]
        difference = stats.paired(excess, model_excess)
        lines.append(common.criterion(text, difference.contains(0.0),
                                      f"difference {difference.text()}; measured r1 dtau_0 "
                                      f"{fits[cold]['excess'].text()}, the model's {model_excess.mean():.4f}"))
    else:
        lines.append(common.criterion(text, False, few if not fits else "the model is unstable at these steps"))
    # What sets the design, measured: the burn-in against the slowest stiff
    # mode, the largest step against the chain's stability, the line's own
    # bias at dtau = 0 in the model.
    for s, m in zip(seeds, model):
        k = np.sort(kappa[s])
        line = np.polyfit(x, m, 1)[1] if np.all(np.isfinite(m)) else np.nan
        print(f"measured: seed {s}: kappa = lambda(K_all)/N at the minimum {k[0]:.3g}..{k[-1]:.3g} (mean "
              f"{k.mean():.3g}); relaxation 1/(2 kappa_min) {1 / (2 * k[0]):.3g} against the burn-in {size['burn']:g}; "
              f"dtau kappa_max at {STEPS[0]:g} dtau_0 {STEPS[0] * dtau0 * k[-1]:.3f} (stable below 2); the model "
              f"line at dtau = 0 {line:.4f}", flush=True)
    return lines


def plot(rows, measured, kappa, size, dtau0, seeds, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    grid = np.linspace(0, max(STEPS) * dtau0, 50)
    temperatures = size["temperatures"]

    def bars(ax, sel, shift, color, label):
        """Measured steps as circles, dtau -> 0 as a diamond, the mean of the
        per-seed lines through them; shifted sideways by `shift` to be seen."""
        sel = sorted(sel, key=lambda r: r["dtau"])
        d, v = np.array([r["dtau"] for r in sel]), np.array([r["value"] for r in sel])
        err = np.array([v - [r["low"] for r in sel], [r["high"] for r in sel] - v])
        for k, marker in ((slice(1, None), "o"), (slice(0, 1), "D")):
            ax.errorbar(d[k] + shift, v[k], yerr=err[:, k], marker=marker, ls="none", capsize=3, color=color,
                        label=label if marker == "o" else None)
        if np.all(np.isfinite(v)):
            # The line through the means is the mean of the per-seed lines.
            ax.plot(grid + shift, v[0] + np.polyfit(d[1:], v[1:], 1)[0] * grid, "-", lw=0.8, color=color)

    shift = 0.02 * dtau0
    for i, T in enumerate(temperatures):
        bars(axes[0], [r for r in rows if r["quantity"] == "ratio" and r["T"] == T],
             (i - (len(temperatures) - 1) / 2) * shift, f"C{i}", f"T = {T:g}")
    if seeds:
        curve = np.mean([[model_ratio(kappa[s], d) for d in grid] for s in seeds], axis=0)
        axes[0].plot(grid, curve, "k--", lw=0.8, label="Euler-Maruyama model, mean_i 1/(1 - dtau kappa_i/2)")
    axes[0].axhline(1, color="0.4", lw=0.8, label="equipartition")
    axes[0].set_xlabel("step dtau (diamonds: dtau -> 0)")
    axes[0].set_ylabel("R* / (T N / (2 M L))")
    bars(axes[1], [r for r in rows if r["quantity"] == "power"], 0.0, "C0",
         f"power of R* against T, T = {temperatures[0]:g}..{temperatures[-1]:g}")
    axes[1].axhline(1, color="0.4", lw=0.8, label="linear in T")
    axes[1].set_xlabel("step dtau (diamond: dtau -> 0)")
    axes[1].set_ylabel("power p")
    n = len(temperatures) * len(STEPS) * len(size["seeds"])
    q = stats.t_quantile(1 - FAMILY / n, 2 * (BATCHES - 1))
    for i, T in enumerate(temperatures):
        for j, x in enumerate(STEPS):
            values = [measured[T, x, s][1] for s in size["seeds"] if (T, x, s) in measured]
            axes[2].plot(np.full(len(values), i * (len(STEPS) + 1) + j), values, "o", ms=3, color=f"C{j}",
                         label=f"dtau = {x:g} dtau_0" if i == 0 else None)
    axes[2].axhline(q, color="k", ls=":", lw=0.8, label=f"Bonferroni bound {q:.2f}")
    axes[2].set_xticks([i * (len(STEPS) + 1) + 1 for i in range(len(temperatures))])
    axes[2].set_xticklabels([f"T = {T:g}" for T in temperatures])
    axes[2].set_ylabel("stationarity statistic, every run")
    flow = next(r for r in rows if r["quantity"] == "flow_risk")
    fig.suptitle(f"error bars: 95 % Student-t over {len(seeds)} seeds ({len(seeds) - 1} dof); dtau_0 = {dtau0:g}; "
                 f"the flows (warm starts) end at R <= {flow['value']:.1e}", fontsize=9)
    common.finish_axes(axes)
    common.save_figure(fig, "langevin", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

#!/usr/bin/env python3
"""Mean-field, not lazy, against a lazy control. In the mean-field scaling
every particle moves O(1) whatever M, so the kernel of the flow,
K_all = (M L) J J^T of every parameter, changes by O(1) during training at
every width, the infinite one included: features are learned. The lazy
control (docs/MODEL.md, section 6: the prediction
yhat(theta0) + alpha (yhat(theta) - yhat(theta0)), the risk over alpha^2)
moves every particle alpha times less; once alpha is large enough for the
kernel to respond linearly to that displacement, its change is a / alpha,
and with alpha = sqrt(M) (the NTK parameterisation) it falls like M^-1/2.
The lazy runs are mft runs on the targets yhat(0) + (y - yhat(0))/alpha
(common.residual_scaled_data: exactly the lazy model for the squared loss;
its risk is alpha^2 times the reported one), from the same particles and
tokens as the mean-field runs.

Setting: icl, N = 32 sequences, L = 4, seeds 6..10 (1..5 were the earlier
design's run, now the pilot: see Power below); three series of runs:
  mean-field   alpha = 1, M in {16, 32, 64, 128, 256};
  lazy-sqrtM   alpha = sqrt(M), the same M;
  lazy-alpha   M = 32, alpha in {2, 8, 32, 128, 512, 2048}: the linear
               response.
M = 8 is left out: the claim is about the limit, and at 8 heads per slice
the change was 1.5 times that of every width from 16 to 256, a small-M
effect beyond a first correction in M^-1/2. K_all at initialisation
(`mft ntk --ntk.part all`); Euler steps of one dtau for all runs,
min(0.05, N / (4 max lambda_max(K_all(0)))) (inside the linearised flow's
stability limit; a larger step makes the top mode oscillate and moves the
kernel in any scaling) up to tau = 5; K_all at the last snapshot
(`mft ntk --from RUN --snapshot -1`).

The kernel's change. |K(tau) - K(0)|_F / |K(0)|_F is carried by the
sequences with the largest gradients (one sequence, its K(0) diagonal four
to seven times the median, held 52-83 % of |K(tau) - K(0)|_F^2 in every
lazy run of the earlier design, and its entry responds nonlinearly even to
the displacements of alpha = 512), so it measures those few sequences. The
change tested here weighs every sequence alike: the kernel normalised by
its initial diagonal, Kn_ij = K_ij / sqrt(K_ii(0) K_jj(0)), each row's
relative change |Kn_i.(tau) - Kn_i.(0)| / |Kn_i.(0)|, and the median over
the N rows (1: the kernel moved by its own size). The Frobenius change is
reported beside it, with the share of |K(tau) - K(0)|_F^2 in the row and
column of the sequence that carries most.

Widths as the theory states them: a limit in M with a finite-width
correction, c + b M^-1/2, not a power law (a correction of relative size
M^-1/2 bends a log-log line over M = 16..256). In the lazy series the
correction has two sources, both of order M^-1/2: the finite-M linear
response and the nonlinear response at alpha = sqrt(M).

Resolution at alpha = 2048. The targets differ from yhat(0) by the
residual over alpha: the reported risk starts near 2e-7 and ends near
3e-11, the heads move ~4e-4, the change to be measured is ~5e-4 of the
kernel. None of it meets a floor: the runs, data files, snapshots and
kernels are float64 (a residual of 5e-4 carries ~1e-12 relative rounding),
the depth solve is fixed-step RK4 (no tolerance whose adaptive steps could
jitter the kernel), and no step count or stopping rule depends on the
risk's size: mft takes train.steps Euler steps whatever R. The lazy flow at
large alpha is the linearised flow scaled by 1/alpha in the same tau, and
so is its Euler path, so tau = 5 in the same steps is as long a training at
alpha = 2048 as at 128 (the risk falls by the same factor, 2.6e3..8.1e3 in
the pilot, at every alpha; the fitted power compares one discretisation at
every alpha). The sanity checks measure this rather than assume it:
  a. the lazy data are the rescaled residual: alpha^2 R(0) of every
     training run equals its forward run's R(0) to 1e-6 (an identity; fails
     if the training run's yhat(0) differs from the forward run's by more
     than ~5e-7 of the residual over alpha: another draw, float precision,
     a cancellation in the targets; the pilot's largest gap 3.4e-15);
  b. the kernel's floor: the change from K(0) of `mft ntk` to the kernel of
     the alpha = 2048 run's first snapshot (`mft ntk --from RUN --snapshot
     0`: the same particles by the path that reads K(tau)) is below 1e-3 of
     that run's change, every seed (fails if the two paths differ: other
     scales, another draw, rounding; 0 in the pilot);
  c. alpha = 2048 trained as the linearised flow: alpha^2 R(tau) within
     10 % of alpha = 512, every seed (fails if a run at tiny risk stalled,
     R falling 1e3-fold less, or diverged; the pilot's gaps 0.04-2.1 %, and
     0.2-9 % from 128 to 512: alpha^2 R approaches the linearised flow's
     like 1/alpha).

Criteria, stated before the runs. Every fit is made seed by seed (the
points of one seed share its particles and tokens) and the interval is the
95 % Student-t interval over the five seeds' fits (4 dof):
  1. mean-field: the change, fitted as c + b M^-1/2, has its limit c above
     0.25: at infinite width the kernel still moves by a quarter of its own
     size (M^0);
  2. lazy-sqrtM: alpha times the change, fitted as c + b M^-1/2, has its
     limit c above 0: the change falls like M^-1/2 at large M, not faster;
  3. lazy-alpha: the power of the change against alpha over alpha >= 128
     (128, 512, 2048: the window stated before the run) lies within
     [-1.1, -0.9] (linear response: alpha times the change constant, to 0.1
     in the power).
Each can fail: (1) if the mean-field change falls to 0 with M or the seeds'
limits scatter down to 0.25; (2) if the linear response vanishes at
infinite width (the change then falls like M^-1 along alpha = sqrt M);
(3) if the kernel's response is not yet linear at these alphas (as at
alpha = 32 in the earlier run: power -0.92 over 32..512) or the seeds'
powers scatter by more than the margin. Each can hold: the pilot's numbers
below lie inside them with room for the planned interval.

Power (stats.Plan; the pilot is seeds 1..5, excluded from the verdicts). A
per-seed fit's interval gives its seeds' spread, s = half-width sqrt(5) /
t_{0.975,4}. Criterion 1, from the earlier run: c 0.797 [0.644, 0.95], s
0.123, five seeds give a half-width of 0.153 against the band 0.547 that
separates 0.797 from 0.25. Criterion 2, from the earlier run: c 0.329
[0.148, 0.51], s 0.146, half-width 0.181 against 0.329. Criterion 3: the
earlier run had no alpha = 2048 and fitted from 32, so its seeds 1..5 were
rerun at M = 32, alpha = 128, 512, 2048 (dtau 0.018, 278 steps, as the
earlier run) as this window's pilot: power -0.987 [-1.00, -0.973], per seed
-1.002, -0.994, -0.983, -0.973, -0.983, s 0.0113; five seeds give a
half-width of 0.014 against the band 0.087, the pilot's distance from the
nearer edge of [-1.1, -0.9].

What was seen before these were stated: the earlier design's full results
(seeds 1..5, docs/experiments/lazy.csv from driver d1545f7: criteria 1-2 as
here, held, c 0.797 [0.644, 0.95] and 0.329 [0.148, 0.51]; criterion 3 over
alpha = 32, 128, 512 failed, power -0.92 [-0.985, -0.856], alpha times the
change 0.838, 1.02, 1.05 at alpha = 32, 128, 512), an independent referee's
reading of them (the near miss comes from alpha = 32: add alpha = 2048 and
fit over alpha >= 128), and the pilot above (in which alpha times the
change was 0.83..1.25 at alpha = 128, 0.86..1.27 at 512, 0.87..1.27 at
2048). Criterion 2 and the normalised change were chosen, before the
earlier run, after a one-seed pilot at full size in which alpha times the
change fell from 1.27 to 0.42 along alpha = sqrt(M), a power near -0.9
rather than -1/2; the power is printed beside the criteria.

  python3 scripts/experiments/lazy.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft forward` and `mft ntk` runs): 25 forward and 25
kernel runs at initialisation, 80 training runs, 80 final kernels and 5
kernels of a first snapshot. The training runs cost the time (a kernel at
M = 32 takes about a second), linear in M and the same at every alpha (the
pilot's runs at alpha = 128 and 2048 took the same time); their widths sum
to 5920 heads per slice against the earlier design's 5760, whose run took
28 minutes on 2 shared cores: about 29 minutes on 2 cores shared alike.
Writes lazy.csv (series, M, alpha, seeds; the change and the Frobenius
change, each a mean over seeds with its 95 % t-interval low-high; the
largest one-sequence share of |K(tau) - K(0)|_F^2; the median particle
displacement |theta(tau) - theta(0)| (Q, K, V of a head as one vector); the
final risk of the model alpha^2 R(tau); every row its runs' mft version and
creation time) and exp_lazy.png (what each criterion fits, with
t-intervals over seeds).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
from pathlib import Path

import numpy as np

import common
import stats
from common import Run

FULL = dict(widths=[16, 32, 64, 128, 256], seeds=[6, 7, 8, 9, 10], sweep_M=32, alphas=[2, 8, 32, 128, 512, 2048],
            fit_from=128, L=4, N=32, tau=5.0, dtau=0.05)  # seeds 1..5: the earlier run, the pilot
QUICK = dict(widths=[2, 4, 8], seeds=[1, 2], sweep_M=4, alphas=[8, 32, 128, 512], fit_from=32, L=2, N=8, tau=0.5,
             dtau=0.05)
SERIES = ("mean-field", "lazy-sqrtM", "lazy-alpha")
LIMITS = {"mean-field": 0.25, "lazy-sqrtM": 0.0}  # criteria 1 and 2: c above these
POWER, MARGIN = -1.0, 0.1      # criterion 3: the power within POWER +- MARGIN
IDENTITY, FLOOR, SETTLED = 1e-6, 1e-3, 0.10  # sanity checks a, b, c
# The pilot: criteria 1 and 2 from the earlier run's intervals (seeds 1..5,
# docs/experiments/lazy-criteria.txt at d1545f7); criterion 3 from seeds 1..5
# rerun at M = 32, alpha = 128, 512, 2048 (their per-seed powers).
PILOT = {"mean-field": (0.797, 0.644, 0.95), "lazy-sqrtM": (0.329, 0.148, 0.51)}
PILOT_POWERS = [-1.00231, -0.994300, -0.982891, -0.973368, -0.982859]
COLUMNS = ["series", "M", "alpha", "seeds", "change", "change_low", "change_high", "frobenius", "frobenius_low",
           "frobenius_high", "top_share", "displacement", "risk"]


def points(size):
    """(series, M, alpha) of every row of the CSV, in order."""
    out = [("mean-field", M, 1.0) for M in size["widths"]]
    out += [("lazy-sqrtM", M, float(np.sqrt(M))) for M in size["widths"]]
    out += [("lazy-alpha", size["sweep_M"], float(a)) for a in size["alphas"]]
    return out


def run_name(M, seed, alpha):
    return f"M{M}-s{seed}-" + ("mean-field" if alpha == 1 else f"lazy-a{alpha:.4g}")


def kernel_change(K0, K1):
    """(change, Frobenius change, top share) of the kernel K0 -> K1 (see the
    module's doc)."""
    dK = K1 - K0
    scale = np.sqrt(np.outer(np.diag(K0), np.diag(K0)))
    rows = np.linalg.norm(dK / scale, axis=1) / np.linalg.norm(K0 / scale, axis=1)
    total = np.sum(dK ** 2)
    # the part of |dK|_F^2 in row and column i (their shared entry once)
    share = (2 * np.sum(dK ** 2, axis=1) - np.diag(dK) ** 2) / total if total > 0 else np.zeros(len(dK))
    return float(np.median(rows)), float(np.sqrt(total) / np.linalg.norm(K0)), float(share.max())


def displacements(path):
    """|theta(tau) - theta(0)| per head (Q, K, V as one vector), first to last snapshot."""
    run = common.mft_io.open_run(str(path))
    first, last = run.particles(0), run.particles(-1)
    run.close()
    heads = [s for s in ("Q", "K", "V") if s in first]
    L, M = first["Q"].shape[:2]
    start = np.hstack([first[s].reshape(L * M, -1) for s in heads])
    end = np.hstack([last[s].reshape(L * M, -1) for s in heads])
    return np.linalg.norm(end - start, axis=1)


def gram(path):
    import h5py
    with h5py.File(path, "r") as f:
        return f["ntk/gram"][()]


def forward_risk(path):
    import h5py
    with h5py.File(path, "r") as f:
        return float(f["forward"].attrs["risk"])


def simulate(size, options):
    """Runs (or finds) every run; returns ({name: path}, dtau, steps)."""
    import h5py
    folder = Path(options.runs) / ("lazy" + ("-quick" if options.quick else ""))
    task = {"data.task": "icl-linear", "data.sequences": size["N"]}

    def model(M, seed):
        return {"model.heads": M, "model.slices": size["L"], "init.seed": seed, "init.sigma_v": 0.5}

    pairs = [(M, seed) for M in dict.fromkeys(size["widths"] + [size["sweep_M"]]) for seed in size["seeds"]]
    first = [Run(f"M{M}-s{seed}-forward", {**task, **model(M, seed)}, command="forward") for M, seed in pairs]
    first += [Run(f"M{M}-s{seed}-ntk0", {**task, **model(M, seed), "ntk.part": "all"}, command="ntk")
              for M, seed in pairs]
    paths = common.execute("lazy", first, options)
    top = 0.0
    for M, seed in pairs:
        with h5py.File(paths[f"M{M}-s{seed}-ntk0"], "r") as f:
            top = max(top, float(f["ntk"].attrs["lambda_max"]))
    dtau = float(f"{min(size['dtau'], size['N'] / (4 * top)):.2g}")
    steps = int(round(size["tau"] / dtau))
    print(f"[lazy] dtau = {dtau:g} (largest lambda_max(K_all(0)) {top:.4g}), {steps} steps")
    training = {"train.steps": steps, "train.dtau": dtau, "output.snapshot_every": steps}
    runs = {}
    for _, M, alpha in points(size):
        for seed in size["seeds"]:
            name = run_name(M, seed, alpha)
            if alpha == 1:
                runs[name] = Run(name, {**task, **model(M, seed), **training})
                continue
            data = common.residual_scaled_data(paths[f"M{M}-s{seed}-forward"], folder, f"M{M}-s{seed}-targets",
                                               1 / alpha)
            runs[name] = Run(name, {"data.task": "file", "data.file": str(data), **model(M, seed), **training})
    paths.update(common.execute("lazy", list(runs.values()), options))
    kernels = [Run(f"{name}-ntkend", {"from": paths[name], "snapshot": -1, "ntk.part": "all"}, command="ntk")
               for name in runs if name in paths]
    # sanity b: the kernel of the largest alpha run's first snapshot, its particles at tau = 0
    largest = [run_name(size["sweep_M"], seed, float(size["alphas"][-1])) for seed in size["seeds"]]
    kernels += [Run(f"{name}-ntkfirst", {"from": paths[name], "snapshot": 0, "ntk.part": "all"}, command="ntk")
                for name in largest if name in paths]
    paths.update(common.execute("lazy", kernels, options))
    return paths, dtau, steps


def measure(size, paths):
    """{(series, M, alpha): {seed: {...}}} over the runs that did not
    diverge: the change, Frobenius change and top share, the displacements,
    alpha^2 R at the end, the relative gap of alpha^2 R(0) from the forward
    run's R(0) (sanity a), at the largest alpha the change from K(0) to the
    kernel of the first snapshot (sanity b), the runs used."""
    found = {}
    for point in points(size):
        _, M, alpha = point
        found[point] = {}
        for seed in size["seeds"]:
            name = run_name(M, seed, alpha)
            if f"{name}-ntkend" not in paths:
                continue
            start = f"M{M}-s{seed}-ntk0"  # the same particles and tokens in every series
            h, _ = common.history(paths[name])
            change, frobenius, share = kernel_change(gram(paths[start]), gram(paths[f"{name}-ntkend"]))
            before = forward_risk(paths[f"M{M}-s{seed}-forward"])
            found[point][seed] = dict(
                change=change, frobenius=frobenius, share=share, displacements=displacements(paths[name]),
                risk=alpha ** 2 * float(h["risk"][-1]), identity=abs(alpha ** 2 * float(h["risk"][0]) / before - 1),
                runs=[paths[k] for k in (start, f"M{M}-s{seed}-forward", name, f"{name}-ntkend")])
            if f"{name}-ntkfirst" in paths:  # the largest alpha: sanity b's floor
                found[point][seed]["floor"] = kernel_change(gram(paths[start]), gram(paths[f"{name}-ntkfirst"]))[0]
                found[point][seed]["runs"].append(paths[f"{name}-ntkfirst"])
    return found


def table(found):
    rows = []
    for (series, M, alpha), by_seed in found.items():
        if not by_seed:
            continue
        values = list(by_seed.values())
        row = {"series": series, "M": M, "alpha": alpha, "seeds": len(values),
               "top_share": np.mean([v["share"] for v in values]),
               "displacement": np.median(np.concatenate([v["displacements"] for v in values])),
               "risk": np.mean([v["risk"] for v in values]), "runs": [p for v in values for p in v["runs"]]}
        for key in ("change", "frobenius"):
            x = np.array([v[key] for v in values])
            interval = stats.t_interval(x) if len(x) > 1 else None
            row.update({key: x.mean(), f"{key}_low": interval.low if interval else np.nan,
                        f"{key}_high": interval.high if interval else np.nan})
        rows.append(row)
    return rows


def curves(size, found, series, metric):
    """(x, Y): the abscissae of a series (M, or alpha for lazy-alpha) and
    Y[seed, point], alpha times `metric` ("change" or "frobenius"), over
    the seeds with every point."""
    mine = [p for p in found if p[0] == series]
    seeds = [s for s in size["seeds"] if all(s in found[p] for p in mine)]
    x = np.array([p[2] if series == "lazy-alpha" else p[1] for p in mine], float)
    return x, np.array([[p[2] * found[p][s][metric] for p in mine] for s in seeds]).reshape(len(seeds), len(mine))


def fits(size, found, metric):
    """The fits the criteria test, for one metric ("change" or "frobenius"),
    seed by seed: {"mean-field" and "lazy-sqrtM": c + b M^-1/2 of alpha
    times the change, "lazy-alpha": its power against alpha over alpha >=
    fit_from, "sqrtM-power": the power of the lazy-sqrtM change against M}.
    A series with fewer than two complete seeds has none."""
    out = {}
    for series in ("mean-field", "lazy-sqrtM"):
        M, Y = curves(size, found, series, metric)
        if len(Y) > 1:
            out[series] = stats.per_seed_fits([np.ones_like(M), M ** -0.5], Y, ("c", "b"))
            if series == "lazy-sqrtM":
                out["sqrtM-power"] = stats.per_seed_slopes(M, Y / np.sqrt(M))
    alpha, Y = curves(size, found, "lazy-alpha", metric)
    window = alpha >= size["fit_from"]
    if len(Y) > 1:
        # Y is alpha times the change: the change is Y / alpha
        out["lazy-alpha"] = stats.per_seed_slopes(alpha[window], Y[:, window] / alpha[window])
    return out


def spread_of(low, high, seeds):
    """The seeds' standard deviation behind a 95 % t-interval of their mean."""
    return (high - low) / 2 * np.sqrt(seeds) / stats.t_quantile(stats.LEVEL, seeds - 1)


def plans(size):
    """The plan: lines of criteria 1-3 (see Power in the module's doc)."""
    lines = []
    for series, what in (("mean-field", "mean-field c above 0.25"), ("lazy-sqrtM", "lazy-sqrtM c above 0")):
        value, low, high = PILOT[series]
        lines.append(stats.Plan(what, value - LIMITS[series], spread_of(low, high, 5), 5,
                                len(size["seeds"])).line())
    p = np.array(PILOT_POWERS)
    band = MARGIN - abs(p.mean() - POWER)  # the pilot's distance from the nearer edge
    lines.append(stats.Plan(f"lazy-alpha power within [{POWER - MARGIN:g}, {POWER + MARGIN:g}]", band,
                            float(p.std(ddof=1)), len(p), len(size["seeds"])).line())
    return lines


def sanity_lines(size, found):
    """Sanity checks a-c (see the module's doc)."""
    gaps = [v["identity"] for by_seed in found.values() for v in by_seed.values()]
    largest, before = (("lazy-alpha", size["sweep_M"], float(a)) for a in size["alphas"][-1:-3:-1])
    alpha = size["alphas"][-1]
    # every seed must have both runs: a diverged one fails b and c
    seeds = [s for s in size["seeds"] if s in found[largest] and s in found[before]]
    complete = len(seeds) == len(size["seeds"]) > 0
    lines = [common.sanity(
        f"the lazy data are the rescaled residual: alpha^2 R(0) of every run equals the forward R(0) to {IDENTITY:g}",
        bool(gaps) and max(gaps) < IDENTITY,
        f"largest relative gap {max(gaps, default=np.nan):.2g} over {len(gaps)} runs; at alpha = {alpha:g} "
        f"{max((found[largest][s]['identity'] for s in seeds), default=np.nan):.2g}")]
    floors = {s: found[largest][s].get("floor", np.nan) for s in seeds}
    changes = {s: found[largest][s]["change"] for s in seeds}
    lines.append(common.sanity(
        f"the kernel's floor: the change from K(0) to the kernel of the alpha = {alpha:g} run's first snapshot is "
        f"below {FLOOR:g} of its change (every seed)",
        complete and all(floors[s] < FLOOR * changes[s] for s in seeds),
        "; ".join(f"seed {s}: {floors[s]:.2g} against {changes[s]:.3g}" for s in seeds) or "no seed"))
    ratios = {s: found[largest][s]["risk"] / found[before][s]["risk"] for s in seeds}
    lines.append(common.sanity(
        f"alpha = {alpha:g} trained as the linearised flow: alpha^2 R(tau) within {100 * SETTLED:g} % of alpha = "
        f"{before[2]:g} (every seed)", complete and all(abs(r - 1) < SETTLED for r in ratios.values()),
        "; ".join(f"seed {s}: {found[largest][s]['risk']:.4g} against {found[before][s]['risk']:.4g}"
                  for s in seeds) or "no seed"))
    return lines


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "lazy", "`mft forward` and `mft ntk`")
    size = QUICK if options.quick else FULL
    paths, dtau, steps = simulate(size, options)
    found = measure(size, paths)
    rows = table(found)
    common.write_csv("lazy", options, COLUMNS, rows)
    fitted, frobenius = fits(size, found, "change"), fits(size, found, "frobenius")
    plot(size, rows, fitted, options)

    def listing(series, scale):
        x = "alpha" if series == "lazy-alpha" else "M"
        return ", ".join(f"{(r['alpha'] if scale else 1) * r['change']:.3g} ({x} = {r[x]:g})"
                         for r in rows if r["series"] == series)

    lines = plans(size) + sanity_lines(size, found)
    for series, text in (("mean-field", "mean-field: the change is c + b M^-1/2"),
                         ("lazy-sqrtM", "lazy, alpha = sqrt M: alpha times the change is c + b M^-1/2")):
        fit, limit = fitted.get(series), LIMITS[series]
        numbers = (f"c {fit['c'].text()}, b {fit['b'].text()}; {'alpha times ' if series != 'mean-field' else ''}"
                   f"the change {listing(series, series != 'mean-field')}" if fit
                   else "no fit: fewer than two seeds with every width")
        lines.append(common.criterion(f"{text} with c above {limit:g}", fit is not None and fit["c"].above(limit),
                                      numbers))
    fit = fitted.get("lazy-alpha")
    low, high = POWER - MARGIN, POWER + MARGIN
    numbers = (f"power {fit['slope'].text()}, per seed {', '.join(f'{x:.3f}' for x in fit.estimates[:, 1])}; "
               f"the change {listing('lazy-alpha', False)}" if fit else "no fit: fewer than two seeds with every alpha")
    lines.append(common.criterion(
        f"lazy, M = {size['sweep_M']}: the power of the change against alpha over alpha >= "
        f"{size['fit_from']:g} lies within [{low:g}, {high:g}]",
        fit is not None and low <= fit["slope"].low and fit["slope"].high <= high, numbers))
    common.write_criteria("lazy", options, lines)

    # Beside the criteria: the power a log-log line gives, the Frobenius
    # change under the same fits, and how much of it one sequence carries.
    print(f"measured: dtau = {dtau:g}, {steps} steps")
    for name, fit in (("change", fitted), ("Frobenius change", frobenius)):
        if "sqrtM-power" in fit:
            power = fit["sqrtM-power"]["slope"]
            print(f"measured: lazy, alpha = sqrt M: the power of the {name} against M {power.text()}")
    for series in ("mean-field", "lazy-sqrtM"):
        if series in frobenius:
            fit = frobenius[series]
            print(f"measured: {series}, Frobenius: c {fit['c'].text()}, b {fit['b'].text()}")
    if "lazy-alpha" in frobenius:
        print(f"measured: lazy-alpha, Frobenius: power {frobenius['lazy-alpha']['slope'].text()}")
    for series in SERIES:
        shares = ", ".join(f"{r['top_share']:.2f}" for r in rows if r["series"] == series)
        print(f"measured: {series}: the largest one-sequence share of |dK|_F^2 {shares}")
    print("measured: lazy-alpha: alpha times the change " + ", ".join(
        f"{r['alpha'] * r['change']:.3g} (Frobenius {r['alpha'] * r['frobenius']:.3g}; alpha = {r['alpha']:g})"
        for r in rows if r["series"] == "lazy-alpha"))


def plot(size, rows, fitted, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.9))

    def draw(ax, x, mine, key, **style):
        """alpha times `key` with its t-interval over seeds."""
        alpha = np.array([r["alpha"] for r in mine])
        y = alpha * [r[key] for r in mine]
        bars = [y - alpha * [r[f"{key}_low"] for r in mine], alpha * [r[f"{key}_high"] for r in mine] - y]
        ax.errorbar(x, y, yerr=bars, marker="o", ms=4, capsize=2, **style)

    # 1 and 2: alpha times the change against M^-1/2, and its limit c at M^-1/2 = 0
    for ax, series, color in ((axes[0], "mean-field", "C0"), (axes[1], "lazy-sqrtM", "C1")):
        mine = [r for r in rows if r["series"] == series]
        x = np.array([r["M"] for r in mine], float) ** -0.5
        draw(ax, x, mine, "change", color=color, label="change (median row)")
        draw(ax, x, mine, "frobenius", color=color, mfc="none", ls=":", label="Frobenius change")
        fit = fitted.get(series)
        if fit:
            c, b = fit["c"], fit["b"]
            grid = np.linspace(0, x.max(), 20)
            ax.plot(grid, c.value + b.value * grid, "k--", lw=0.8, label=f"c + b M^-1/2, c = {c.text(2)}")
            ax.errorbar([0], [c.value], yerr=[[c.value - c.low], [c.high - c.value]], fmt="ks", ms=4, capsize=3)
        ax.axhline(LIMITS[series], color="C3", lw=0.8, ls=":", label=f"criterion: c > {LIMITS[series]:g}")
        ax.set_xlabel("M^-1/2 (M heads per slice)")
        ax.set_xlim(left=-0.01)
    axes[0].set_title("1. mean-field: kernel change", fontsize=9)
    axes[0].set_ylabel("kernel change")
    axes[1].set_title("2. lazy, α = √M: α × kernel change", fontsize=9)
    axes[1].set_ylabel("α × kernel change")

    # 3. alpha times the change at fixed M (the mean-field run is alpha = 1):
    # flat where the kernel responds linearly
    ax = axes[2]
    mine = [r for r in rows if r["series"] == "mean-field" and r["M"] == size["sweep_M"]]
    mine += [r for r in rows if r["series"] == "lazy-alpha"]
    alpha = np.array([r["alpha"] for r in mine])
    fit = fitted.get("lazy-alpha")
    draw(ax, alpha, mine, "change", color="C2",
         label="change" + (f", power {fit['slope'].text(2)}" if fit else ""))
    draw(ax, alpha, mine, "frobenius", color="C2", mfc="none", ls=":", label="Frobenius change")
    ax.axvspan(size["fit_from"] / 1.3, size["alphas"][-1] * 1.3, color="0.9",
               label=f"fitted: criterion power in [{POWER - MARGIN:g}, {POWER + MARGIN:g}]")
    ax.set_xscale("log")
    ax.set_xlabel(f"α (M = {size['sweep_M']}; α = 1: mean-field)")
    ax.set_title(f"3. lazy, M = {size['sweep_M']}: α × kernel change", fontsize=9)
    ax.set_ylabel("α × kernel change")
    for ax in axes:
        ax.set_ylim(bottom=0)
    fig.suptitle(f"means over {len(size['seeds'])} seeds, bars: 95 % t-intervals ({len(size['seeds']) - 1} dof); "
                 "the change: median over sequences i of |Kn_i·(τ) − Kn_i·(0)| / |Kn_i·(0)|, "
                 "Kn_ij = K_ij / √(K_ii(0) K_jj(0))", fontsize=8)
    common.finish_axes(axes)
    common.save_figure(fig, "lazy", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

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
(exactly the lazy model for the squared loss; its risk is alpha^2 times the
reported one), from the same particles and tokens as the mean-field runs.

Setting: icl, N = 32 sequences, L = 4, seeds 1..5; three series of runs:
  mean-field   alpha = 1, M in {16, 32, 64, 128, 256};
  lazy-sqrtM   alpha = sqrt(M), the same M;
  lazy-alpha   M = 32, alpha in {2, 8, 32, 128, 512}: the linear response.
M = 8 is left out: the claim is about the limit, and at 8 heads per slice
the change was 1.5 times that of every width from 16 to 256, a small-M
effect beyond a first correction in M^-1/2. K_all at initialisation
(`mft ntk --ntk.part all`); Euler steps of one dtau for all runs,
min(0.05, N / (4 max lambda_max(K_all(0)))) (inside the linearised flow's
stability limit; a larger step makes the top mode oscillate and moves the
kernel in any scaling) up to tau = 5; K_all at the last snapshot
(`mft ntk --from RUN --snapshot -1`).

The kernel's change. |K(tau) - K(0)|_F / |K(0)|_F is carried by the
sequences with the largest gradients (in the first runs one sequence, its
K(0) diagonal four to seven times the median, held most of
|K(tau) - K(0)|_F^2, and its entry responds nonlinearly even to the
displacements of alpha = 512), so it measures those few sequences. The change tested here weighs every sequence alike:
the kernel normalised by its initial diagonal,
Kn_ij = K_ij / sqrt(K_ii(0) K_jj(0)), each row's relative change
|Kn_i.(tau) - Kn_i.(0)| / |Kn_i.(0)|, and the median over the N rows
(1: the kernel moved by its own size). The Frobenius change is reported
beside it, with the share of |K(tau) - K(0)|_F^2 in the row and column of
the sequence that carries most.

Widths as the theory states them: a limit in M with a finite-width
correction, c + b M^-1/2, not a power law (a correction of relative size
M^-1/2 bends a log-log line over M = 16..256). In the lazy series the
correction has two sources, both of order M^-1/2: the finite-M linear
response and the nonlinear response at alpha = sqrt(M).

Criteria, stated before the runs. Every fit is made seed by seed (the
points of one seed share its particles and tokens) and the interval is the
95 % Student-t interval over the five seeds' fits (4 dof):
  1. mean-field: the change, fitted as c + b M^-1/2, has its limit c above
     0.25: at infinite width the kernel still moves by a quarter of its own
     size (M^0);
  2. lazy-sqrtM: alpha times the change, fitted as c + b M^-1/2, has its
     limit c above 0: the change falls like M^-1/2 at large M, not faster;
  3. lazy-alpha: the power of the change against alpha over the three
     largest alphas (32, 128, 512) lies within [-1.1, -0.9] (linear
     response: alpha times the change constant, to 0.1 in the power).
Criterion 2 and the normalised change were chosen after a one-seed pilot
at full size (seed 1: M = 16 and 256, alpha = 8, 128, 512 at M = 32; part of
these runs), in which alpha times the change fell from 1.27 to 0.42 along
alpha = sqrt(M), a power near -0.9 rather than -1/2; the power is printed
beside the criteria.
Each can fail: (1) if the mean-field change falls to 0 with M, (2) if the
linear response vanishes at infinite width (the change then falls like
M^-1 along alpha = sqrt M), (3) if the kernel's response is not yet linear
at these alphas or the seeds' powers scatter by more than 0.1.

  python3 scripts/experiments/lazy.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft forward` and `mft ntk` runs): 25 forward and 25
kernel runs at initialisation, 75 training runs (their widths sum to 5760
heads per slice, the earlier design's to 3024), 75 final kernels. About 30
CPU-minutes (a one-seed pilot's CPU time, scaled): 15 minutes on 2 idle
cores, up to 45 on 2 cores shared as the earlier design's 22-minute run was.
Writes lazy.csv (series, M, alpha, seeds; the change and the Frobenius
change, each a mean over seeds with its 95 % t-interval low-high; the
largest one-sequence share of |K(tau) - K(0)|_F^2; the median particle
displacement |theta(tau) - theta(0)| (Q, K, V of a head as one vector); the
final risk of the model) and exp_lazy.png (what each criterion fits, with
t-intervals over seeds).
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
from pathlib import Path

import numpy as np

import common
import stats
from common import Run

FULL = dict(widths=[16, 32, 64, 128, 256], seeds=[1, 2, 3, 4, 5], sweep_M=32, alphas=[2, 8, 32, 128, 512],
            L=4, N=32, tau=5.0, dtau=0.05)
QUICK = dict(widths=[2, 4, 8], seeds=[1, 2], sweep_M=4, alphas=[8, 32, 128], L=2, N=8, tau=0.5, dtau=0.05)
SERIES = ("mean-field", "lazy-sqrtM", "lazy-alpha")
LIMITS = {"mean-field": 0.25, "lazy-sqrtM": 0.0}  # criteria 1 and 2: c above these
FIT_ALPHAS = 3                 # criterion 3: the three largest alphas
POWER, MARGIN = -1.0, 0.1      # criterion 3: the power within POWER +- MARGIN
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
    paths.update(common.execute("lazy", kernels, options))
    return paths, dtau, steps


def measure(size, paths):
    """{(series, M, alpha): {seed: (change, frobenius, top share, displacements, risk)}} over
    the runs that did not diverge."""
    found = {}
    for point in points(size):
        _, M, alpha = point
        found[point] = {}
        for seed in size["seeds"]:
            name = run_name(M, seed, alpha)
            if f"{name}-ntkend" not in paths:
                continue
            K0 = gram(paths[f"M{M}-s{seed}-ntk0"])  # the same particles and tokens in every series
            h, _ = common.history(paths[name])
            found[point][seed] = (*kernel_change(K0, gram(paths[f"{name}-ntkend"])), displacements(paths[name]),
                                  alpha ** 2 * float(h["risk"][-1]))
    return found


def table(found):
    rows = []
    for (series, M, alpha), by_seed in found.items():
        if not by_seed:
            continue
        values = list(by_seed.values())
        row = {"series": series, "M": M, "alpha": alpha, "seeds": len(values),
               "top_share": np.mean([v[2] for v in values]),
               "displacement": np.median(np.concatenate([v[3] for v in values])),
               "risk": np.mean([v[4] for v in values])}
        for j, key in enumerate(("change", "frobenius")):
            x = np.array([v[j] for v in values])
            interval = stats.t_interval(x) if len(x) > 1 else None
            row.update({key: x.mean(), f"{key}_low": interval.low if interval else np.nan,
                        f"{key}_high": interval.high if interval else np.nan})
        rows.append(row)
    return rows


def curves(size, found, series, metric):
    """(x, Y): the abscissae of a series (M, or alpha for lazy-alpha) and
    Y[seed, point], alpha times `metric` (0: the change, 1: Frobenius), over
    the seeds with every point."""
    mine = [p for p in found if p[0] == series]
    seeds = [s for s in size["seeds"] if all(s in found[p] for p in mine)]
    x = np.array([p[2] if series == "lazy-alpha" else p[1] for p in mine], float)
    return x, np.array([[p[2] * found[p][s][metric] for p in mine] for s in seeds]).reshape(len(seeds), len(mine))


def fits(size, found, metric):
    """The fits the criteria test, for one metric (0: the change, 1:
    Frobenius), seed by seed: {"mean-field" and "lazy-sqrtM": c + b M^-1/2
    of alpha times the change, "lazy-alpha": its power against alpha over
    the largest alphas, "sqrtM-power": the power of the lazy-sqrtM change
    against M}. A series with fewer than two complete seeds has none."""
    out = {}
    for series in ("mean-field", "lazy-sqrtM"):
        M, Y = curves(size, found, series, metric)
        if len(Y) > 1:
            out[series] = stats.per_seed_fits([np.ones_like(M), M ** -0.5], Y, ("c", "b"))
            if series == "lazy-sqrtM":
                out["sqrtM-power"] = stats.per_seed_slopes(M, Y / np.sqrt(M))
    alpha, Y = curves(size, found, "lazy-alpha", metric)
    if len(Y) > 1:
        # alpha Y is alpha^2 times the change: its power is the change's plus 1
        out["lazy-alpha"] = stats.per_seed_slopes(alpha[-FIT_ALPHAS:], Y[:, -FIT_ALPHAS:] / alpha[-FIT_ALPHAS:])
    return out


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "lazy", "`mft forward` and `mft ntk`")
    size = QUICK if options.quick else FULL
    paths, dtau, steps = simulate(size, options)
    found = measure(size, paths)
    rows = table(found)
    common.write_csv("lazy", options, COLUMNS, rows)
    fitted, frobenius = fits(size, found, 0), fits(size, found, 1)
    plot(size, rows, fitted, options)

    def listing(series, scale):
        x = "alpha" if series == "lazy-alpha" else "M"
        return ", ".join(f"{(r['alpha'] if scale else 1) * r['change']:.3g} ({x} = {r[x]:g})"
                         for r in rows if r["series"] == series)

    lines = []
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
    numbers = (f"power {fit['slope'].text()}; the change {listing('lazy-alpha', False)}" if fit
               else "no fit: fewer than two seeds with every alpha")
    lines.append(common.criterion(
        f"lazy, M = {size['sweep_M']}: the power of the change against alpha over alpha >= "
        f"{size['alphas'][-FIT_ALPHAS]:g} lies within [{low:g}, {high:g}]",
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
    ax.axvspan(size["alphas"][-FIT_ALPHAS] / 1.3, size["alphas"][-1] * 1.3, color="0.9",
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

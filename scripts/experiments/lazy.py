#!/usr/bin/env python3
"""Mean-field, not lazy, against a lazy control. In the mean-field scaling
every particle moves O(1) whatever M, so the kernel of the flow,
K_all = (M L) J J^T of every parameter, changes by O(1) during training at
every width, the infinite one included: features are learned. The lazy
control (docs/MODEL.md, section 6: the prediction
yhat(theta0) + alpha (yhat(theta) - yhat(theta0)), the risk over alpha^2)
moves every particle alpha times less; once alpha is large enough for the
kernel to respond linearly to that displacement, its change is c / alpha.
The lazy runs are mft runs on the targets yhat(0) + (y - yhat(0))/alpha
(exactly the lazy model for the squared loss; its risk is alpha^2 times the
reported one), from the same particles and tokens as the mean-field runs.

Setting: icl, N = 32 sequences, L = 4, seeds 1..5; three series of runs:
  mean-field   alpha = 1, M in {16, 32, 64, 128, 256};
  lazy-sqrtM   alpha = sqrt(M) (the NTK parameterisation), the same M;
  lazy-alpha   M = 32, alpha in {2, 8, 32, 128, 512}: the linear response.
M = 8 is left out: the claim is about the limit, and at 8 heads per slice
(one head an eighth of the measure) the change was 1.5 times that of every
width from 16 to 256, a small-M effect that a first correction in M^-1/2
does not describe. K_all at initialisation (`mft ntk --ntk.part all`);
Euler steps of one dtau for all runs, min(0.05, N / (4 max lambda_max(
K_all(0)))) (inside the linearised flow's stability limit; a larger step
makes the top mode oscillate and moves the kernel in any scaling) up to
tau = 5; K_all at the last snapshot (`mft ntk --from RUN --snapshot -1`).

The kernel's change. |K(tau) - K(0)|_F / |K(0)|_F is carried by the
sequences with the largest gradients (in the first runs one sequence, its
K(0) diagonal four times the median, held most of |K(tau) - K(0)|_F^2), so
it measures those few sequences. The change tested here weighs every
sequence alike: the kernel normalised by its initial diagonal,
Kn_ij = K_ij / sqrt(K_ii(0) K_jj(0)), each row's relative change
|Kn_i.(tau) - Kn_i.(0)| / |Kn_i.(0)|, and the median over the N rows
(1: the kernel moved by its own size). The Frobenius change is reported
beside it, with the share of |K(tau) - K(0)|_F^2 in the row and column of
the sequence that carries most.

Criteria, stated before the runs. Every fit is made seed by seed (the
points of one seed share its particles and tokens) and the interval is the
95 % Student-t interval over the five seeds' fits (4 dof):
  1. mean-field: the change fitted as c + b M^-1/2 has its limit c above
     0.25: at infinite width the kernel still moves by a quarter of its
     own size (M^0 with a finite-width correction, not a power law);
  2. lazy-sqrtM: the power of the change against M lies within
     [-0.6, -0.4] (M^-1/2, to 0.1);
  3. lazy-alpha: the power of the change against alpha over the three
     largest alphas (32, 128, 512) lies within [-1.1, -0.9] (linear
     response: alpha times the change constant, to 0.1 in the power).
Each can fail: (1) if the mean-field change falls to 0 with M, (2) and (3)
if the kernel's response is not yet linear at these alphas, or if the
seeds' powers scatter more than 0.1.

  python3 scripts/experiments/lazy.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft forward` and `mft ntk` runs). About 40 minutes on 2
cores (25 forward and 25 kernel runs at initialisation, 75 training runs,
75 final kernels). Writes lazy.csv (series, M, alpha, seeds; the change and
the Frobenius change, each a mean over seeds with its 95 % t-interval
low-high; the largest one-sequence share of |K(tau) - K(0)|_F^2; the
median particle displacement |theta(tau) - theta(0)| (Q, K, V of a head as
one vector); the final risk of the model) and exp_lazy.png.
"""
from pathlib import Path

import numpy as np

import common
import stats
from common import Run

FULL = dict(widths=[16, 32, 64, 128, 256], seeds=[1, 2, 3, 4, 5], sweep_M=32, alphas=[2, 8, 32, 128, 512],
            L=4, N=32, tau=5.0, dtau=0.05)
QUICK = dict(widths=[2, 4, 8], seeds=[1, 2], sweep_M=4, alphas=[8, 32, 128], L=2, N=8, tau=0.5, dtau=0.05)
SERIES = ("mean-field", "lazy-sqrtM", "lazy-alpha")
FIT_ALPHAS = 3  # the linear response is fitted over the three largest alphas
LIMIT = 0.25    # criterion 1: the least change at infinite width
TARGETS = {"lazy-sqrtM": -0.5, "lazy-alpha": -1.0}
MARGIN = 0.1    # criteria 2 and 3: the power to within this
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


def table(size, found):
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
    """(x, Y): the abscissae (M or alpha) of a series and Y[seed, point] of
    `metric` (0: the change, 1: Frobenius), over the seeds with every point."""
    mine = [p for p in found if p[0] == series]
    seeds = [s for s in size["seeds"] if all(s in found[p] for p in mine)]
    x = np.array([p[2] if series == "lazy-alpha" else p[1] for p in mine], float)
    return x, np.array([[found[p][s][metric] for p in mine] for s in seeds])


def fits(size, found, metric):
    """The three fits the criteria test, for one metric: {series: interval}
    (mean-field: the limit c; the lazy series: the power)."""
    out = {}
    M, Y = curves(size, found, "mean-field", metric)
    if len(Y) > 1:
        out["mean-field"] = stats.per_seed_fits([np.ones_like(M), M ** -0.5], Y, ("c", "b"))
    M, Y = curves(size, found, "lazy-sqrtM", metric)
    if len(Y) > 1:
        out["lazy-sqrtM"] = stats.per_seed_slopes(M, Y)
    alpha, Y = curves(size, found, "lazy-alpha", metric)
    if len(Y) > 1:
        out["lazy-alpha"] = stats.per_seed_slopes(alpha[-FIT_ALPHAS:], Y[:, -FIT_ALPHAS:])
    return out


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "lazy", "`mft forward` and `mft ntk`")
    size = QUICK if options.quick else FULL
    paths, dtau, steps = simulate(size, options)
    found = measure(size, paths)
    rows = table(size, found)
    common.write_csv("lazy", options, COLUMNS, rows)
    fitted = fits(size, found, 0)
    frobenius = fits(size, found, 1)
    plot(size, rows, fitted, options)

    def listing(series, key):
        return ", ".join(f"{r[key]:.3g} ({'M' if series != 'lazy-alpha' else 'alpha'} = "
                         f"{r['M'] if series != 'lazy-alpha' else r['alpha']:g})"
                         for r in rows if r["series"] == series)

    lines = []
    fit = fitted.get("mean-field")
    numbers = (f"c {fit['c'].text()}, b {fit['b'].text()}; change {listing('mean-field', 'change')}"
               if fit else "no fit: fewer than two seeds with every width")
    lines.append(common.criterion(f"mean-field: the change is c + b M^-1/2 with c above {LIMIT:g}",
                                  fit is not None and fit["c"].above(LIMIT), numbers))
    for series, text in (("lazy-sqrtM", "lazy, alpha = sqrt M: the power of the change against M"),
                         ("lazy-alpha", f"lazy, M = {size['sweep_M']}: the power of the change against alpha "
                                        f"over alpha >= {size['alphas'][-FIT_ALPHAS]:g}")):
        target = TARGETS[series]
        fit = fitted.get(series)
        low, high = target - MARGIN, target + MARGIN
        holds = fit is not None and fit["slope"].low >= low and fit["slope"].high <= high
        numbers = (f"power {fit['slope'].text()}; change {listing(series, 'change')}" if fit
                   else "no fit: fewer than two seeds with every point")
        lines.append(common.criterion(f"{text} lies within [{low:g}, {high:g}]", holds, numbers))
    common.write_criteria("lazy", options, lines)

    # The Frobenius change beside it, and what carries it.
    print(f"measured: dtau = {dtau:g}, {steps} steps")
    if "mean-field" in frobenius:
        fit = frobenius["mean-field"]
        print(f"measured: Frobenius, mean-field: c {fit['c'].text()}, b {fit['b'].text()}")
    for series in ("lazy-sqrtM", "lazy-alpha"):
        if series in frobenius:
            print(f"measured: Frobenius, {series}: power {frobenius[series]['slope'].text()}")
    for series in SERIES:
        shares = ", ".join(f"{r['top_share']:.2f}" for r in rows if r["series"] == series)
        print(f"measured: {series}: the largest one-sequence share of |dK|_F^2 {shares}")
    sweep = [r for r in rows if r["series"] == "lazy-alpha"]
    print("measured: lazy-alpha: alpha times the change " + ", ".join(
        f"{r['alpha'] * r['change']:.3g} (Frobenius {r['alpha'] * r['frobenius']:.3g}, alpha = {r['alpha']:g})"
        for r in sweep))


def plot(size, rows, fitted, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))

    def draw(ax, x, mine, key, scale, **style):
        y = np.array([r[key] for r in mine]) * scale
        bars = [y - np.array([r[f"{key}_low"] for r in mine]) * scale,
                np.array([r[f"{key}_high"] for r in mine]) * scale - y]
        ax.errorbar(x, y, yerr=bars, marker="o", ms=4, capsize=2, **style)

    # 1. the mean-field change against M^-1/2, and its limit c at M^-1/2 = 0
    ax = axes[0]
    mine = [r for r in rows if r["series"] == "mean-field"]
    x = np.array([r["M"] for r in mine], float) ** -0.5
    draw(ax, x, mine, "change", 1, color="C0", label="change (median row)")
    draw(ax, x, mine, "frobenius", 1, color="C0", mfc="none", ls=":", label="Frobenius change")
    fit = fitted.get("mean-field")
    if fit:
        c, b = fit["c"], fit["b"]
        grid = np.linspace(0, x.max(), 20)
        ax.plot(grid, c.value + b.value * grid, "k--", lw=0.8, label=f"c + b M^-1/2, c = {c.text(2)}")
        ax.errorbar([0], [c.value], yerr=[[c.value - c.low], [c.high - c.value]], fmt="ks", ms=4, capsize=3)
    ax.axhline(LIMIT, color="C3", lw=0.8, ls=":", label=f"c > {LIMIT:g} (criterion)")
    ax.set_xlabel("M^-1/2 (heads per slice M)")
    ax.set_ylabel("kernel change, mean-field")
    ax.set_xlim(left=-0.01)
    ax.set_ylim(bottom=0)

    # 2. the lazy change along alpha = sqrt M, against M
    ax = axes[1]
    mine = [r for r in rows if r["series"] == "lazy-sqrtM"]
    M = np.array([r["M"] for r in mine], float)
    fit = fitted.get("lazy-sqrtM")
    draw(ax, M, mine, "change", 1, color="C1",
         label=f"change, power {fit['slope'].text(2)}" if fit else "change")
    draw(ax, M, mine, "frobenius", 1, color="C1", mfc="none", ls=":", label="Frobenius change")
    ax.plot(M, mine[0]["change"] * (M / M[0]) ** -0.5, "k--", lw=0.8, label="M^-1/2")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("heads per slice M (alpha = sqrt M)")
    ax.set_ylabel("kernel change, lazy")

    # 3. alpha times the change at fixed M, the mean-field run as alpha = 1:
    # flat where the kernel responds linearly
    ax = axes[2]
    mine = [r for r in rows if r["series"] == "mean-field" and r["M"] == size["sweep_M"]]
    mine += [r for r in rows if r["series"] == "lazy-alpha"]
    alpha = np.array([r["alpha"] for r in mine], float)
    fit = fitted.get("lazy-alpha")
    for key, style in (("change", {}), ("frobenius", {"mfc": "none", "ls": ":"})):
        y = np.array([r[key] for r in mine]) * alpha
        bars = [y - alpha * [r[f"{key}_low"] for r in mine], alpha * [r[f"{key}_high"] for r in mine] - y]
        label = "alpha × change" if key == "change" else "alpha × Frobenius change"
        if key == "change" and fit:
            label += f", power {fit['slope'].text(2)}"
        ax.errorbar(alpha, y, yerr=bars, marker="o", ms=4, capsize=2, color="C2", label=label, **style)
    fitted_from = size["alphas"][-FIT_ALPHAS]
    ax.axvspan(fitted_from / 1.3, size["alphas"][-1] * 1.3, color="0.9", label="fitted")
    ax.set_xscale("log")
    ax.set_xlabel(f"alpha (M = {size['sweep_M']}; alpha = 1: mean-field)")
    ax.set_ylabel("alpha × kernel change")
    ax.set_ylim(bottom=0)
    for ax in axes:
        ax.set_title(ax.get_ylabel().replace("kernel change, ", ""), fontsize=9)
    fig.suptitle(f"means over seeds, bars: 95 % t-intervals ({len(size['seeds']) - 1} dof)", fontsize=9)
    common.finish_axes(axes)
    common.save_figure(fig, "lazy", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

#!/usr/bin/env python3
"""The mean-field limit (propagation of chaos, [A] Prop. 3.3 / Thm 3.1),
measured as the theory states it, seed by seed.

Width. Per seed, one reference of M_ref = 2048 heads per slice (L = 4) and
runs of M in {4, 8, ..., 256}; particle m of every run starts equal to
particle m of the reference (streams keyed by (seed, l, m), docs/MODEL.md).
At snapshots along training the coupling distance

    D(M, tau) = (1/(M L)) sum_{l, m < M} |theta_lm^(M)(tau) - theta_lm^(ref)(tau)|

is compared with the theory's M^(-1/2). Because the reference shares its
first M particles, D scales as sqrt(1 - M/M_ref)/sqrt(M): the driver divides
that factor out. D relative to the mean displacement of the reference's
particles says whether D is small (coupled) or saturated: a width whose
seed-mean D / displacement at the last snapshot is 0.5 or more is saturated
and left out of the fit (the rule, computed, not chosen by eye). The widths
of one seed share its draws (nested), so the slope is fitted seed by seed
and its interval is the Student-t interval over the seeds.

Depth. At M = 16 fixed, L in {1, 2, 4, 8, 16} against a reference of the
same M and seed with L_ref = 64 slices, so the runs differ from their
reference in L alone; the signed gap R_L - R_ref at the end, fitted per seed
as a/L + b, is [A]'s O(1/L) term (with the fluctuation term, also 1/L at
fixed M).

The loss bias R_M - R_ref of the width sweep is recorded with its
t-interval per width but not judged: its mean is O(1/M) while its seed
spread is O(M^-1/2), so at 10 seeds the 1/M law is below the noise at every
unsaturated width (the driver prints the spread's measured power, which
says how many seeds a resolved 1/M would need).

Task: icl-linear with N = 16 sequences of n = 8 tokens, the gradient flow
(Euler, dtau = 0.02, 100 steps: tau = 2), seeds 1..10.

Criteria, stated before the runs (95 % Student-t intervals over the seeds):
  1. the per-seed log-log slope of D/sqrt(1 - M/M_ref) against M over the
     unsaturated widths at tau = 2 has an interval containing -0.5;
  2. at M = 16 the per-seed coefficient a of R_L - R_ref = a/L + b has an
     interval above 0 (the gap falls with depth).

  python3 scripts/experiments/mean_field.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

110 runs; about 35 minutes on 2 cores (the ten 8192-head references are
most of it). Writes mean_field.csv, mean_field-criteria.txt and
exp_mean_field.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import numpy as np

import common
import stats
from common import Run

FULL = dict(widths=[4, 8, 16, 32, 64, 128, 256], L=4, reference=2048, seeds=list(range(1, 11)), N=16, n=8,
            steps=100, snapshot=25, dtau=0.02, depth_M=16, depth_L=[1, 2, 4, 8, 16], depth_reference=64)
QUICK = dict(widths=[32, 64, 128], L=2, reference=512, seeds=[1, 2, 3], N=8, n=6, steps=6, snapshot=3,
             dtau=0.02, depth_M=2, depth_L=[1, 2, 4], depth_reference=8)
# A width is saturated when its coupling distance is this fraction of the
# particles' displacement or more: no longer a small difference.
SATURATED = 0.5
COLUMNS = ["sweep", "M", "L", "tau", "seeds", "corrected", "corrected_low", "corrected_high", "relative",
           "saturated", "loss_bias", "loss_bias_low", "loss_bias_high"]


def particles(path, index):
    """The particles of snapshot `index` and its tau."""
    run = common.mft_io.open_run(str(path))
    p, tau = run.particles(index), float(run.snapshot_taus[index])
    run.close()
    return p, tau


def heads(path, index=-1):
    return particles(path, index)[0]


def coupling_distance(small, large):
    """Mean |theta_lm - theta'_lm| over the small run's heads (l, m): Q, K, V
    as one vector."""
    L, M = small["Q"].shape[:2]
    flat = lambda p: np.concatenate([p[s][:, :M].reshape(L, M, -1) for s in ("Q", "K", "V")], axis=2)
    return float(np.linalg.norm(flat(small) - flat(large), axis=2).mean())


def final_risk(path):
    return float(common.history(path)[0]["risk"][-1])


def interval_or_nan(values):
    """The t-interval of the values, or NaNs for fewer than two."""
    if len(values) < 2:
        return np.nan, np.nan, np.nan
    iv = stats.t_interval(values)
    return iv.value, iv.low, iv.high


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    base = {"data.task": "icl-linear", "data.sequences": size["N"], "data.tokens": size["n"], "init.sigma_v": 0.5,
            "train.steps": size["steps"], "train.dtau": size["dtau"], "output.snapshot_every": size["snapshot"]}
    depth_models = [(size["depth_M"], L) for L in size["depth_L"] + [size["depth_reference"]]]
    models = [(M, size["L"]) for M in size["widths"] + [size["reference"]]] + depth_models
    runs = [Run(f"M{M}-L{L}-s{s}", {**base, "model.heads": M, "model.slices": L, "init.seed": s})
            for s in size["seeds"] for M, L in dict.fromkeys(models)]
    if not options.from_sweep and not options.slurm:
        print(f"[mean_field] {len(runs)} runs; the full mode takes about 35 minutes on 2 cores", flush=True)
    paths = common.execute("mean_field", runs, options)
    name = lambda M, L, s: f"M{M}-L{L}-s{s}"
    snapshots = size["steps"] // size["snapshot"] + 1
    ref, L = size["reference"], size["L"]
    # Seeds whose every width run and reference finished (a diverged run
    # would make the seed's curve incomplete: the seed is left out, counted).
    seeds = [s for s in size["seeds"] if all(name(M, L, s) in paths for M in size["widths"] + [ref])]

    rows, curves, biases = [], {}, {}
    for M in size["widths"]:
        for k in range(1, snapshots):
            D, moved, bias = [], [], []
            for s in seeds:
                (a, tau), (b, _), (b0, _) = (particles(paths[name(M, L, s)], k), particles(paths[name(ref, L, s)], k),
                                             particles(paths[name(ref, L, s)], 0))
                if k == 1:
                    assert coupling_distance(heads(paths[name(M, L, s)], 0), b0) == 0.0, \
                        "the coupled runs must start equal"
                D.append(coupling_distance(a, b) / np.sqrt(1 - M / ref))
                moved.append(coupling_distance(b, b0))
                bias.append(final_risk(paths[name(M, L, s)]) - final_risk(paths[name(ref, L, s)]))
            curves[M, k] = np.array(D)
            biases[M] = np.array(bias)
            value, low, high = interval_or_nan(D)
            relative = float(np.mean(np.array(D) * np.sqrt(1 - M / ref) / np.array(moved)))
            b, b_low, b_high = interval_or_nan(bias) if k == snapshots - 1 else (np.nan, np.nan, np.nan)
            rows.append({"sweep": "width", "M": M, "L": L, "tau": tau, "seeds": len(D), "corrected": value,
                         "corrected_low": low, "corrected_high": high, "relative": relative,
                         "saturated": int(relative >= SATURATED), "loss_bias": b, "loss_bias_low": b_low,
                         "loss_bias_high": b_high, "runs": [paths[name(X, L, s)] for s in seeds for X in (M, ref)]})
    M_d, L_ref = size["depth_M"], size["depth_reference"]
    depth_seeds = [s for s in size["seeds"] if all(name(M_d, Ld, s) in paths for Ld in size["depth_L"] + [L_ref])]
    gaps = np.array([[final_risk(paths[name(M_d, Ld, s)]) - final_risk(paths[name(M_d, L_ref, s)])
                      for Ld in size["depth_L"]] for s in depth_seeds])
    for j, Ld in enumerate(size["depth_L"]):
        g, g_low, g_high = interval_or_nan(gaps[:, j])
        rows.append({"sweep": "depth", "M": M_d, "L": Ld, "tau": size["steps"] * size["dtau"],
                     "seeds": len(depth_seeds), "corrected": np.nan, "corrected_low": np.nan,
                     "corrected_high": np.nan, "relative": np.nan, "saturated": 0, "loss_bias": g,
                     "loss_bias_low": g_low, "loss_bias_high": g_high,
                     "runs": [paths[name(M_d, X, s)] for s in depth_seeds for X in (Ld, L_ref)]})
    common.write_csv("mean_field", options, COLUMNS, rows)
    for r in rows:
        print(f"{r['sweep']:5} M={r['M']:<4} L={r['L']:<3} tau={r['tau']:<5.3g} D/sqrt(1-M/M_ref) = "
              f"{r['corrected']:.4e} [{r['corrected_low']:.3e}, {r['corrected_high']:.3e}] (relative to the "
              f"displacement {r['relative']:.3f}); loss bias/gap {r['loss_bias']:.3e} [{r['loss_bias_low']:.2e}, "
              f"{r['loss_bias_high']:.2e}]")
    lines = analyse(rows, curves, biases, gaps, size, seeds, snapshots)
    common.write_criteria("mean_field", options, lines)
    plot(rows, gaps, size, snapshots, options)


def window(rows, size, snapshots):
    """The unsaturated widths at the last snapshot."""
    end = max(r["tau"] for r in rows if r["sweep"] == "width")
    return [r["M"] for r in rows if r["sweep"] == "width" and r["tau"] == end and not r["saturated"]]


def analyse(rows, curves, biases, gaps, size, seeds, snapshots):
    widths = window(rows, size, snapshots)
    k = snapshots - 1
    end = max(r["tau"] for r in rows if r["sweep"] == "width")
    if len(widths) >= 2:
        Y = np.array([curves[M, k] for M in widths]).T  # (seeds, widths)
        fit = stats.per_seed_slopes(widths, Y)
        slope = fit["slope"]
        line = common.criterion(
            f"the per-seed slope of D / sqrt(1 - M/M_ref) against M over the unsaturated widths at tau = {end:g}: "
            "the interval contains -0.5", slope.contains(-0.5),
            f"slope {slope.text()} over M = {widths[0]}..{widths[-1]} ({len(widths)} widths, {len(seeds)} seeds); "
            "per seed " + ", ".join(f"{v:.3f}" for v in fit.estimates[:, 1]))
    else:
        line = common.criterion(f"the per-seed slope of D / sqrt(1 - M/M_ref) against M over the unsaturated widths "
                                f"at tau = {end:g}: the interval contains -0.5", False,
                                f"only {len(widths)} unsaturated widths: no slope")
    lines = [line]
    inv_L = 1.0 / np.array(size["depth_L"], float)
    depth = stats.per_seed_fits([inv_L, np.ones_like(inv_L)], gaps, ("a", "b"))
    lines.append(common.criterion(
        f"at M = {size['depth_M']} the per-seed a of R_L - R_ref = a/L + b (L_ref = {size['depth_reference']}): the "
        "interval lies above 0", depth["a"].above(0.0),
        f"a = {depth['a'].text()}, b = {depth['b'].text()}, L = {size['depth_L'][0]}..{size['depth_L'][-1]}"))
    # The loss bias is not judged (see the docstring); the power of its seed
    # spread against M says why: a spread ~ M^-1/2 hides a mean ~ 1/M.
    if len(widths) >= 2 and len(seeds) >= 2:
        spread = [np.std(biases[M], ddof=1) for M in widths]
        if all(v > 0 for v in spread):
            power = np.polyfit(np.log(widths), np.log(spread), 1)[0]
            print(f"measured: the seed spread of R_M - R_ref falls as M^{power:.2f} over M = {widths[0]}..{widths[-1]} "
                  f"(standard deviations " + ", ".join(f"{v:.1e}" for v in spread) + ")", flush=True)
    return lines


def plot(rows, gaps, size, snapshots, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.9))
    width = [r for r in rows if r["sweep"] == "width"]
    taus = sorted({r["tau"] for r in width})

    def bars(sel, key):
        mid = np.array([r[key] for r in sel])
        return mid, [mid - np.array([r[key + "_low"] for r in sel]), np.array([r[key + "_high"] for r in sel]) - mid]

    for i, tau in enumerate(taus):
        sel = [r for r in width if r["tau"] == tau]
        M = np.array([r["M"] for r in sel], float)
        mid, err = bars(sel, "corrected")
        axes[0].errorbar(M, mid, yerr=err, marker="o", capsize=3, color=f"C{i}", label=f"tau = {tau:g}")
        axes[1].plot(M, [r["relative"] for r in sel], "o-", color=f"C{i}", label=f"tau = {tau:g}")
    widths = window(rows, size, snapshots)
    last = [r for r in width if r["tau"] == taus[-1]]
    M = np.array([r["M"] for r in last], float)
    if widths:
        anchor = next(r for r in last if r["M"] == widths[0])
        axes[0].plot(M, anchor["corrected"] * (M / anchor["M"]) ** -0.5, "k:",
                     label=f"M^-1/2 (through M = {anchor['M']})")
    axes[0].set_ylabel("D / sqrt(1 - M/M_ref)")
    axes[0].set_yscale("log")
    axes[1].axhline(SATURATED, color="0.5", ls="--", lw=0.8, label="saturated at or above")
    axes[1].set_ylabel("D / mean displacement of the particles")
    mid, err = bars(last, "loss_bias")
    axes[2].errorbar(M, mid, yerr=err, marker="s", capsize=3, ls="none", label=f"R_M - R_ref at tau = {taus[-1]:g}")
    axes[2].axhline(0, color="0.5", lw=0.8)
    axes[2].set_ylabel("signed loss bias (not judged)")
    for ax in axes[:3]:
        ax.set_xlabel(f"heads per slice M (L = {size['L']}, M_ref = {size['reference']})")
        ax.set_xscale("log", base=2)
    depth = [r for r in rows if r["sweep"] == "depth"]
    inv_L = np.array([1.0 / r["L"] for r in depth])
    mid, err = bars(depth, "loss_bias")
    axes[3].errorbar(inv_L, mid, yerr=err, marker="^", capsize=3, ls="none",
                     label=f"R_L - R_ref, M = {size['depth_M']}, L_ref = {size['depth_reference']}")
    fit = stats.per_seed_fits([inv_L, np.ones_like(inv_L)], gaps, ("a", "b"))
    grid = np.linspace(0, inv_L.max(), 20)
    axes[3].plot(grid, fit["a"].value * grid + fit["b"].value, "k:", label="a/L + b (mean of the per-seed fits)")
    axes[3].axhline(0, color="0.5", lw=0.8)
    axes[3].set_xlabel("1/L")
    axes[3].set_ylabel(f"signed risk gap at tau = {taus[-1]:g}")
    fig.suptitle(f"error bars: 95 % Student-t over {last[0]['seeds']} seeds", fontsize=9)
    common.finish_axes(axes)
    common.save_figure(fig, "mean_field", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

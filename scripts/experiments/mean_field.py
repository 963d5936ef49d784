#!/usr/bin/env python3
"""The mean-field limit (propagation of chaos, [A] Prop. 3.3 / Thm 3.1),
measured as the theory states it.

Width. Per seed, one reference of M_ref = 2048 heads per slice (L = 4) and
runs of M in {4, 8, ..., 256}; particle m of every run starts equal to
particle m of the reference (streams keyed by (seed, l, m), docs/MODEL.md).
At snapshots along training the coupling distance

    D(M, tau) = (1/(M L)) sum_{l, m < M} |theta_lm^(M)(tau) - theta_lm^(ref)(tau)|

is compared with the theory's M^(-1/2). Because the reference shares its
first M particles, D scales as sqrt(1 - M/M_ref)/sqrt(M): the driver divides
that factor out. D relative to the mean displacement of the reference's
particles says whether D is small (coupled) or saturated. The seed-averaged
loss bias R_M - R_ref at the end is compared with 1/M.

Depth. With M L = 64 fixed, (M, L) in {(32, 2), (16, 4), (8, 8), (4, 16)}
against a reference (64, 32): the fluctuation term (of order 1/(M L)) stays
the same, so the change of the loss gap with L is [A]'s O(1/L) term; fitted
as a/L + b.

Task: icl-linear with N = 16 sequences of n = 8 tokens, the gradient flow
(Euler, dtau = 0.02, 100 steps: tau = 2), three seeds.

Criteria, stated before the runs:
  1. the log-log slope of D/sqrt(1 - M/M_ref) over M >= 16 at tau = 2
     (weighted by the seed spread) has a 2-SE interval containing -0.5;
  2. the loss bias's slope against M has a 2-SE interval containing -1;
  3. at fixed M L the loss gap falls with depth: a > 0 by two standard errors.

  python3 scripts/experiments/mean_field.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

Writes mean_field.csv, mean_field-criteria.txt and exp_mean_field.png.
"""
import numpy as np

import common
import fits
from common import Run

FULL = dict(widths=[4, 8, 16, 32, 64, 128, 256], L=4, reference=2048, fit_from=16, seeds=[1, 2, 3], N=16, n=8,
            steps=100, snapshot=25, dtau=0.02, depth=[(32, 2), (16, 4), (8, 8), (4, 16)], depth_reference=(64, 32))
QUICK = dict(widths=[2, 4, 8], L=2, reference=32, fit_from=2, seeds=[1, 2], N=8, n=6, steps=6, snapshot=3,
             dtau=0.02, depth=[(4, 1), (2, 2), (1, 4)], depth_reference=(4, 8))


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


def weighted_or_plain(x, y, e):
    """The weighted fit where every point has a spread, else the plain one
    (chi^2 and curvature then unknown)."""
    if len(x) >= 3 and np.all(np.asarray(e) > 0):
        return fits.weighted_power_law(x, y, e)
    f = fits.power_law(x, y)
    return fits.WeightedFit(f.value, f.error, f.prefactor, f.points, np.nan, np.nan, np.nan)


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    base = {"data.task": "icl-linear", "data.sequences": size["N"], "data.tokens": size["n"], "init.sigma_v": 0.5,
            "train.steps": size["steps"], "train.dtau": size["dtau"], "output.snapshot_every": size["snapshot"]}
    models = [(M, size["L"]) for M in size["widths"] + [size["reference"]]] + size["depth"] + [size["depth_reference"]]
    runs = [Run(f"M{M}-L{L}-s{s}", {**base, "model.heads": M, "model.slices": L, "init.seed": s})
            for s in size["seeds"] for M, L in dict.fromkeys(models)]
    if not options.from_sweep and not options.slurm:
        print(f"[mean_field] {len(runs)} runs; the full mode takes about 20 minutes on 2 cores", flush=True)
    paths = common.execute("mean_field", runs, options)
    name = lambda M, L, s: f"M{M}-L{L}-s{s}"
    snapshots = size["steps"] // size["snapshot"] + 1
    ref, L = size["reference"], size["L"]

    rows = []
    for M in size["widths"]:
        for k in range(1, snapshots):
            D, moved, bias = [], [], []
            for s in size["seeds"]:
                if name(M, L, s) not in paths or name(ref, L, s) not in paths:
                    continue
                (a, tau), (b, _), (b0, _) = (particles(paths[name(M, L, s)], k), particles(paths[name(ref, L, s)], k),
                                             particles(paths[name(ref, L, s)], 0))
                if k == 1:
                    assert coupling_distance(heads(paths[name(M, L, s)], 0), b0) == 0.0, \
                        "the coupled runs must start equal"
                D.append(coupling_distance(a, b))
                moved.append(coupling_distance(b, b0))
                bias.append(final_risk(paths[name(M, L, s)]) - final_risk(paths[name(ref, L, s)]))
            if not D:
                continue
            d, d_err = common.mean_and_error(D)
            factor = np.sqrt(1 - M / ref)
            b, b_err = common.mean_and_error(bias) if k == snapshots - 1 else (np.nan, np.nan)
            rows.append({"sweep": "width", "M": M, "L": L, "tau": tau, "seeds": len(D), "distance": d,
                         "distance_err": d_err, "corrected": d / factor, "corrected_err": d_err / factor,
                         "relative": d / np.mean(moved), "loss_bias": b, "loss_bias_err": b_err})
    M_ref, L_ref = size["depth_reference"]
    for M, Ld in size["depth"]:
        gaps = [abs(final_risk(paths[name(M, Ld, s)]) - final_risk(paths[name(M_ref, L_ref, s)]))
                for s in size["seeds"] if name(M, Ld, s) in paths and name(M_ref, L_ref, s) in paths]
        if gaps:
            g, g_err = common.mean_and_error(gaps)
            rows.append({"sweep": "depth", "M": M, "L": Ld, "tau": size["steps"] * size["dtau"], "seeds": len(gaps),
                         "distance": np.nan, "distance_err": np.nan, "corrected": np.nan, "corrected_err": np.nan,
                         "relative": np.nan, "loss_bias": g, "loss_bias_err": g_err})
    columns = ["sweep", "M", "L", "tau", "seeds", "distance", "distance_err", "corrected", "corrected_err",
               "relative", "loss_bias", "loss_bias_err"]
    common.write_csv("mean_field", options, columns, rows)
    for r in rows:
        print(f"{r['sweep']:5} M={r['M']:<4} L={r['L']:<3} tau={r['tau']:<5.3g} D = {r['distance']:.4e} +- "
              f"{r['distance_err']:.1e} (corrected {r['corrected']:.4e}, relative to the displacement "
              f"{r['relative']:.3f}); loss bias/gap {r['loss_bias']:.3e} +- {r['loss_bias_err']:.1e}")
    lines = analyse(rows, size)
    common.write_criteria("mean_field", options, lines)
    plot(rows, size, options)


def analyse(rows, size):
    end = max(r["tau"] for r in rows if r["sweep"] == "width")
    last = [r for r in rows if r["sweep"] == "width" and r["tau"] == end]
    window = [r for r in last if r["M"] >= size["fit_from"]]
    fd = weighted_or_plain([r["M"] for r in window], [r["corrected"] for r in window],
                           [r["corrected_err"] for r in window])
    lines = [common.criterion(
        f"D / sqrt(1 - M/M_ref) ~ M^slope over M >= {size['fit_from']} at tau = {end:g}: 2-SE interval contains -0.5",
        abs(fd.value + 0.5) <= 2 * fd.error,
        f"slope {fd.value:.3f} +- {fd.error:.3f} over M = {window[0]['M']}..{window[-1]['M']} ({fd.points} points), "
        f"chi2 {fd.chi2:.2f} on {fd.dof} dof, curvature {fd.curvature:.3f} +- {fd.curvature_error:.3f}")]
    biased = [r for r in last if r["loss_bias"] > 0]
    if len(biased) >= 2:
        fb = weighted_or_plain([r["M"] for r in biased], [r["loss_bias"] for r in biased],
                               [r["loss_bias_err"] for r in biased])
        lines.append(common.criterion(
            "the loss bias R_M - R_ref ~ M^slope: 2-SE interval contains -1", abs(fb.value + 1) <= 2 * fb.error,
            f"slope {fb.value:.3f} +- {fb.error:.3f} over the {fb.points} widths with a positive bias "
            f"(of {len(last)}), chi2 {fb.chi2:.2f} on {fb.dof} dof"))
    else:
        lines.append(common.criterion("the loss bias R_M - R_ref ~ M^slope: 2-SE interval contains -1", False,
                                      f"only {len(biased)} widths with a positive bias: no slope"))
    depth = [r for r in rows if r["sweep"] == "depth"]
    inv_L = np.array([1.0 / r["L"] for r in depth])
    g, e = np.array([r["loss_bias"] for r in depth]), np.array([r["loss_bias_err"] for r in depth])
    w = 1 / np.where(e > 0, e, np.nan) if np.all(e > 0) else np.ones_like(g)
    A = np.column_stack([inv_L, np.ones_like(inv_L)]) * w[:, None]
    coef, *_ = np.linalg.lstsq(A, g * w, rcond=None)
    cov = np.linalg.inv(A.T @ A)
    chi2 = float(np.sum((A @ coef - g * w) ** 2)) if np.all(e > 0) else np.nan
    a, a_err = coef[0], np.sqrt(cov[0, 0]) if np.all(e > 0) else np.nan
    lines.append(common.criterion(
        f"at M L = {depth[0]['M'] * depth[0]['L']} the loss gap falls with depth as a/L + b with a > 0 by 2 SE",
        bool(a > 2 * a_err), f"a = {a:.3e} +- {a_err:.1e}, b = {coef[1]:.3e}, chi2 {chi2:.2f} on "
                             f"{len(depth) - 2} dof, L = {depth[0]['L']}..{depth[-1]['L']}"))
    return lines


def plot(rows, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    width = [r for r in rows if r["sweep"] == "width"]
    taus = sorted({r["tau"] for r in width})
    for i, tau in enumerate(taus):
        sel = [r for r in width if r["tau"] == tau]
        M = np.array([r["M"] for r in sel], float)
        axes[0].errorbar(M, [r["corrected"] for r in sel], yerr=[r["corrected_err"] for r in sel], marker="o",
                         capsize=3, color=f"C{i}", label=f"tau = {tau:g}")
        axes[1].plot(M, [r["relative"] for r in sel], "o-", color=f"C{i}", label=f"tau = {tau:g}")
    last = [r for r in width if r["tau"] == taus[-1]]
    M = np.array([r["M"] for r in last], float)
    anchor = [r for r in last if r["M"] >= size["fit_from"]][0]
    axes[0].plot(M, anchor["corrected"] * (M / anchor["M"]) ** -0.5, "k:", label=f"M^-1/2 (through M = {anchor['M']})")
    axes[0].set_ylabel("D / sqrt(1 - M/M_ref)  (parameter distance)")
    axes[1].set_ylabel("D / mean displacement of the particles")
    for ax in axes[:2]:
        ax.set_xlabel(f"heads per slice M (L = {size['L']}, M_ref = {size['reference']})")
    bias = [r for r in last if np.isfinite(r["loss_bias"])]
    axes[2].errorbar([r["M"] for r in bias], [abs(r["loss_bias"]) for r in bias],
                     yerr=[r["loss_bias_err"] for r in bias], marker="s", capsize=3, label="|R_M - R_ref| (width)")
    guide = next(r for r in bias if r["M"] >= size["fit_from"])  # not a saturated small M
    axes[2].plot(M, abs(guide["loss_bias"]) * (M / guide["M"]) ** -1.0, "k:", label=f"1/M (through M = {guide['M']})")
    depth = [r for r in rows if r["sweep"] == "depth"]
    axes[2].errorbar([r["L"] for r in depth], [r["loss_bias"] for r in depth],
                     yerr=[r["loss_bias_err"] for r in depth], marker="^", capsize=3,
                     label=f"|R - R_ref| against L at M L = {depth[0]['M'] * depth[0]['L']}")
    axes[2].set_xlabel("M (width) or L (depth)")
    axes[2].set_ylabel(f"risk difference at tau = {taus[-1]:g}")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    common.save_figure(fig, "mean_field", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

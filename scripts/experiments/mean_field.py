#!/usr/bin/python3
"""The mean-field limit (propagation of chaos, [A] Prop. 3.3 / Thm 3.1).
Particle m of a run with M heads per slice starts equal to particle m of a
reference run with 16 M (the coupled streams of MODEL.md §9); after the same
tau, the mean coupling distance

    D(M) = (1/(M L)) sum_{l, m < M} |theta_lm^(M)(tau) - theta_lm^(16 M)(tau)|

should fall like M^(-1/2) up to a log. Also: the gap of the loss curves,
max over tau of |R_M - R_16M|, against M; the same gap against the depth L at
fixed M (reference 16 L is not a coupling across depth: the loss gap alone,
[A]: O(1/L)); and the conditional W2 distance between the two particle
measures (mft.compare's, as scripts/compare_runs.py prints it: exact optimal
transport per slice).

  /usr/bin/python3 scripts/experiments/mean_field.py [--quick] [--jobs J] [--slurm | --from-sweep JOB]

Writes mean_field.csv (sweep, M, L, seeds, D and its standard error, the
loss gap, the conditional W2) and exp_mean_field.png; prints the fitted
slopes of D and of the loss gap with their standard errors.
"""
import numpy as np

import common
import fits
from common import Run

FULL = dict(widths=[1, 2, 4, 8, 16], L=4, depths=[1, 2, 4, 8], fixed_M=8, depth_factor=8, factor=16,
            seeds=[1, 2, 3], N=32, steps=100, dtau=0.02)
QUICK = dict(widths=[1, 2, 4], L=2, depths=[1, 2], fixed_M=2, depth_factor=2, factor=4, seeds=[1], N=8,
             steps=10, dtau=0.02)


def heads(path, index=-1):
    run = common.mft_io.open_run(str(path))
    p = run.particles(index)
    run.close()
    return p


def coupling_distance(small, large):
    """Mean |theta_lm - theta'_lm| over the small run's heads (l, m)."""
    L, M = small["Q"].shape[:2]
    a = np.hstack([small[s].reshape(L, M, -1) for s in ("Q", "K", "V")])
    b = np.hstack([large[s][:, :M].reshape(L, M, -1) for s in ("Q", "K", "V")])
    return float(np.linalg.norm(a - b, axis=2).mean())


def loss_gap(h_small, h_large):
    tau = h_small["tau"]
    other = np.interp(tau, h_large["tau"], h_large["risk"])
    return float(np.max(np.abs(h_small["risk"] - other)))


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    base = {"data.task": "icl-linear", "data.sequences": size["N"], "init.sigma_v": 0.5, "train.steps": size["steps"],
            "train.dtau": size["dtau"], "output.snapshot_every": size["steps"]}
    runs, names = [], set()

    def add(M, L, seed):
        name = f"M{M}-L{L}-s{seed}"
        if name not in names:
            names.add(name)
            runs.append(Run(name, {**base, "model.heads": M, "model.slices": L, "init.seed": seed}))
        return name

    for seed in size["seeds"]:
        for M in size["widths"]:
            add(M, size["L"], seed)
            add(size["factor"] * M, size["L"], seed)
        for L in size["depths"]:
            add(size["fixed_M"], L, seed)
            add(size["fixed_M"], size["depth_factor"] * L, seed)
    paths = common.execute("mean_field", runs, options)

    from mft import compare  # the conditional W2 of two particle measures
    rows = []
    for M in size["widths"]:
        D, gap, w2 = [], [], []
        for seed in size["seeds"]:
            a, b = f"M{M}-L{size['L']}-s{seed}", f"M{size['factor'] * M}-L{size['L']}-s{seed}"
            if a not in paths or b not in paths:
                continue
            pa, pb = heads(paths[a]), heads(paths[b])
            start_a, start_b = heads(paths[a], 0), heads(paths[b], 0)
            assert coupling_distance(start_a, start_b) == 0.0, "the coupled runs must start equal"
            D.append(coupling_distance(pa, pb))
            gap.append(loss_gap(common.history(paths[a])[0], common.history(paths[b])[0]))
            w2.append(np.sqrt(compare.conditional_w2_squared(pa, pb)))
        if not D:
            continue
        d, d_err = common.mean_and_error(D)
        g, g_err = common.mean_and_error(gap)
        rows.append({"sweep": "width", "M": M, "L": size["L"], "seeds": len(D), "distance": d, "distance_err": d_err,
                     "loss_gap": g, "loss_gap_err": g_err, "w2": float(np.mean(w2))})
    for L in size["depths"]:
        gap = []
        for seed in size["seeds"]:
            a, b = f"M{size['fixed_M']}-L{L}-s{seed}", f"M{size['fixed_M']}-L{size['depth_factor'] * L}-s{seed}"
            if a in paths and b in paths:
                gap.append(loss_gap(common.history(paths[a])[0], common.history(paths[b])[0]))
        if gap:
            g, g_err = common.mean_and_error(gap)
            rows.append({"sweep": "depth", "M": size["fixed_M"], "L": L, "seeds": len(gap), "distance": np.nan,
                         "distance_err": np.nan, "loss_gap": g, "loss_gap_err": g_err, "w2": np.nan})
    common.write_csv("mean_field", options, ["sweep", "M", "L", "seeds", "distance", "distance_err", "loss_gap",
                                             "loss_gap_err", "w2"], rows)

    width = [r for r in rows if r["sweep"] == "width"]
    depth = [r for r in rows if r["sweep"] == "depth"]
    fit_d = fits.power_law([r["M"] for r in width], [r["distance"] for r in width])
    fit_g = fits.power_law([r["M"] for r in width], [r["loss_gap"] for r in width])
    fit_l = fits.power_law([r["L"] for r in depth], [r["loss_gap"] for r in depth]) if len(depth) >= 2 else None

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    M = np.array([r["M"] for r in width], float)
    axes[0].errorbar(M, [r["distance"] for r in width], yerr=[r["distance_err"] for r in width], marker="o",
                     label=f"coupling distance: M^{fit_d.value:.2f}±{fit_d.error:.2f}")
    axes[0].errorbar(M, [r["loss_gap"] for r in width], yerr=[r["loss_gap_err"] for r in width], marker="s",
                     label=f"loss gap: M^{fit_g.value:.2f}±{fit_g.error:.2f}")
    axes[0].plot(M, [r["w2"] for r in width], "^-", label="conditional W2")
    axes[0].plot(M, width[0]["distance"] * (M / M[0]) ** -0.5, "k:", label="M^-1/2")
    axes[0].set_xlabel(f"heads per slice M (reference {size['factor']} M, L = {size['L']})")
    if depth:
        Ls = np.array([r["L"] for r in depth], float)
        label = f"loss gap: L^{fit_l.value:.2f}±{fit_l.error:.2f}" if fit_l else "loss gap"
        axes[1].errorbar(Ls, [r["loss_gap"] for r in depth], yerr=[r["loss_gap_err"] for r in depth], marker="s",
                         label=label)
        axes[1].plot(Ls, depth[0]["loss_gap"] * (Ls / Ls[0]) ** -1.0, "k:", label="1/L")
        axes[1].set_xlabel(f"slices L (reference {size['depth_factor']} L, M = {size['fixed_M']})")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    common.save_figure(fig, "mean_field", options)
    for r in rows:
        print(f"{r['sweep']:5} M={r['M']:<3} L={r['L']:<3} distance {r['distance']:.4e} +- {r['distance_err']:.1e}, "
              f"loss gap {r['loss_gap']:.3e} +- {r['loss_gap_err']:.1e}, W2 {r['w2']:.4e}")
    print(f"coupling distance ~ M^{fit_d.value:.3f} +- {fit_d.error:.3f} ([A]: -0.5 up to a log)")
    print(f"loss gap ~ M^{fit_g.value:.3f} +- {fit_g.error:.3f}")
    if fit_l:
        print(f"loss gap ~ L^{fit_l.value:.3f} +- {fit_l.error:.3f} ([A]: -1)")


if __name__ == "__main__":
    main()

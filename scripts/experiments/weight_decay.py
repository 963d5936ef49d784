#!/usr/bin/python3
"""Weight decay ([A] Thm 4.1): with weight decay lambda the flow reaches a
risk O(lambda) plus the finite-size error. The final risk R and objective Q
against lambda over three decades, on the teacher task (the student is wider
than its teacher, so R = 0 is attainable without decay); the slope of R
against lambda at small lambda, fitted on log-log axes.

  /usr/bin/python3 scripts/experiments/weight_decay.py [--quick] [--jobs J] [--slurm | --from-sweep JOB]

Writes weight_decay.csv (lambda, seeds, R and Q: mean and standard error,
the squared parameter norm (Q - R) * 2 / lambda) and exp_weight_decay.png;
prints the fitted slope with its standard error.
"""
import numpy as np

import common
import fits
from common import Run

FULL = dict(lambdas=[1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1], small=4, seeds=[1, 2, 3], M=16, L=4,
            N=32, teacher=4, steps=400, dtau=0.1)
QUICK = dict(lambdas=[1e-3, 1e-2, 1e-1], small=3, seeds=[1], M=4, L=2, N=8, teacher=2, steps=20, dtau=0.1)


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs = []
    for lam in size["lambdas"]:
        for seed in size["seeds"]:
            runs.append(Run(f"lambda{lam:g}-s{seed}", {
                "data.task": "teacher", "data.teacher_heads": size["teacher"], "data.sequences": size["N"],
                "model.heads": size["M"], "model.slices": size["L"], "init.seed": seed,
                "train.lambda": lam, "train.steps": size["steps"], "train.dtau": size["dtau"],
                "output.snapshot_every": size["steps"]}))
    paths = common.execute("weight_decay", runs, options)

    rows = []
    for lam in size["lambdas"]:
        found, diverged = common.seed_histories(paths, [f"lambda{lam:g}-s{seed}" for seed in size["seeds"]])
        R = [h["risk"][-1] for h in found]
        Q = [h["objective"][-1] for h in found]
        r, r_err = common.mean_and_error(R) if R else (np.nan, np.nan)
        q, q_err = common.mean_and_error(Q) if Q else (np.nan, np.nan)
        rows.append({"lambda": lam, "seeds": len(size["seeds"]), "diverged": diverged, "risk": r, "risk_err": r_err,
                     "objective": q, "objective_err": q_err, "norm2": (q - r) * 2 / lam})
    common.write_csv("weight_decay", options,
                     ["lambda", "seeds", "diverged", "risk", "risk_err", "objective", "objective_err", "norm2"], rows)

    small = [r for r in rows[: size["small"]] if np.isfinite(r["risk"]) and r["risk"] > 0]
    fit = fits.power_law([r["lambda"] for r in small], [r["risk"] for r in small]) if len(small) >= 2 else None

    plt = common.pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    lam = [r["lambda"] for r in rows]
    ax.errorbar(lam, [r["risk"] for r in rows], yerr=[r["risk_err"] for r in rows], marker="o", label="risk R")
    ax.errorbar(lam, [r["objective"] for r in rows], yerr=[r["objective_err"] for r in rows], marker="s",
                ls="--", label="objective Q")
    if fit:
        x = np.array([small[0]["lambda"], small[-1]["lambda"]])
        ax.plot(x, fit.prefactor * x**fit.value, "k:", label=f"fit: slope {fit.value:.2f} ± {fit.error:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("weight decay λ")
    ax.set_ylabel(f"after τ = {size['steps'] * size['dtau']:g}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    common.save_figure(fig, "weight_decay", options)
    for r in rows:
        print(f"lambda {r['lambda']:.0e}: R = {r['risk']:.3e} +- {r['risk_err']:.1e}, Q = {r['objective']:.3e}, "
              f"|theta|^2 = {r['norm2']:.3e}" + (f" ({r['diverged']} diverged)" if r["diverged"] else ""))
    if fit:
        print(f"R against lambda at the {fit.points} smallest: slope {fit.value:.3f} +- {fit.error:.3f} "
              "(R = O(lambda) means slope >= 1 when the finite-size error is below it)")


if __name__ == "__main__":
    main()

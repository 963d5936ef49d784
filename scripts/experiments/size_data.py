#!/usr/bin/python3
"""Model size against data (seed [A]'s trade-off question): the held-out risk
on a grid of heads per slice M and training sequences N (in-context linear
regression, fixed depth), as a heat map. Where does a wider model stop
helping, where does more data?

  /usr/bin/python3 scripts/experiments/size_data.py [--quick] [--jobs J] [--slurm | --from-sweep JOB]

Writes size_data.csv (M, N, seeds, final training risk, held-out risk and
its standard error) and exp_size_data.png.
"""
import numpy as np

import common
from common import Run

FULL = dict(widths=[2, 4, 8, 16, 32], sizes=[16, 32, 64, 128, 256], L=4, test=256, seeds=[1, 2],
            steps=150, dtau=0.05)
QUICK = dict(widths=[2, 4], sizes=[8, 16], L=2, test=16, seeds=[1], steps=10, dtau=0.05)


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs = [Run(f"M{M}-N{N}-s{seed}", {"data.task": "icl-linear", "data.sequences": N,
                                       "data.test_sequences": size["test"], "init.sigma_v": 0.5,
                                       "model.heads": M, "model.slices": size["L"], "init.seed": seed,
                                       "train.steps": size["steps"], "train.dtau": size["dtau"],
                                       "output.snapshot_every": size["steps"]})
            for M in size["widths"] for N in size["sizes"] for seed in size["seeds"]]
    paths = common.execute("size_data", runs, options)

    rows = []
    for M in size["widths"]:
        for N in size["sizes"]:
            found, _ = common.seed_histories(paths, [f"M{M}-N{N}-s{seed}" for seed in size["seeds"]])
            train = [h["risk"][-1] for h in found]
            test = [h["test_risk"][-1] for h in found]
            t, t_err = common.mean_and_error(test) if test else (np.nan, np.nan)
            rows.append({"M": M, "N": N, "seeds": len(test), "diverged": len(size["seeds"]) - len(test),
                         "risk": float(np.mean(train)) if train else np.nan, "test_risk": t, "test_risk_err": t_err})
    common.write_csv("size_data", options, ["M", "N", "seeds", "diverged", "risk", "test_risk", "test_risk_err"], rows)

    grid = np.array([[next(r["test_risk"] for r in rows if r["M"] == M and r["N"] == N) for N in size["sizes"]]
                     for M in size["widths"]])
    plt = common.pyplot()
    fig, ax = plt.subplots(figsize=(5.4, 4))
    image = ax.imshow(np.log10(grid), origin="lower", cmap="viridis", aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            ax.text(j, i, f"{grid[i, j]:.2g}", ha="center", va="center", fontsize=7, color="w")
    ax.set_xticks(range(len(size["sizes"])))
    ax.set_xticklabels(size["sizes"])
    ax.set_yticks(range(len(size["widths"])))
    ax.set_yticklabels(size["widths"])
    ax.set_xlabel("training sequences N")
    ax.set_ylabel(f"heads per slice M (L = {size['L']})")
    fig.colorbar(image, label="log10 held-out risk")
    common.save_figure(fig, "size_data", options)
    for r in rows:
        print(f"M={r['M']:<3} N={r['N']:<4} train R {r['risk']:.3e}, held-out R {r['test_risk']:.3e} "
              f"+- {r['test_risk_err']:.1e}")


if __name__ == "__main__":
    main()

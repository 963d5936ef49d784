#!/usr/bin/env python3
"""Coupled scaling of the token dimension d and the width M ([B]'s open
problem): d in {4, 8, 16, 32} with M growing like d and like d^2. For each,
the coupling distance of the M-head run to a reference with 4 M heads (the
coupled streams of MODEL.md §9, as in mean_field.py) after the same tau, and
the final loss. An observation with no theory to match: the write-up says
what is seen.

  python3 scripts/experiments/d_and_m.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

Writes d_and_m.csv (d, scaling, M, seeds, coupling distance and its standard
error, the distance divided by the initial head norm, final R) and
exp_d_and_m.png.
"""
import numpy as np

import common
from common import Run
from mean_field import coupling_distance, heads

FULL = dict(dims=[4, 8, 16, 32], linear=lambda d: d, quadratic=lambda d: d * d // 16, factor=4, seeds=[1, 2],
            L=4, N=32, steps=100, dtau=0.02)
QUICK = dict(dims=[4, 8], linear=lambda d: d // 2, quadratic=lambda d: d * d // 16, factor=2, seeds=[1],
             L=2, N=8, steps=10, dtau=0.02)


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs, names = [], set()
    plan = [(d, scaling, size[scaling](d)) for d in size["dims"] for scaling in ("linear", "quadratic")]
    for d, _, M in plan:
        for seed in size["seeds"]:
            for heads_ in (M, size["factor"] * M):
                name = f"d{d}-M{heads_}-s{seed}"
                if name in names:
                    continue
                names.add(name)
                runs.append(Run(name, {"data.task": "icl-linear", "model.d": d, "model.head_dim": d,
                                       "data.sequences": size["N"], "init.sigma_v": 0.5, "model.heads": heads_,
                                       "model.slices": size["L"], "init.seed": seed, "train.steps": size["steps"],
                                       "train.dtau": size["dtau"], "output.snapshot_every": size["steps"]}))
    paths = common.execute("d_and_m", runs, options)

    rows = []
    for d, scaling, M in plan:
        D, rel, risk = [], [], []  # per seed
        for seed in size["seeds"]:
            a, b = f"d{d}-M{M}-s{seed}", f"d{d}-M{size['factor'] * M}-s{seed}"
            if a not in paths or b not in paths:
                continue
            start = heads(paths[a], 0)
            D.append(coupling_distance(heads(paths[a]), heads(paths[b])))
            L_, M_ = start["Q"].shape[:2]
            norm = np.linalg.norm(np.hstack([start[s].reshape(L_ * M_, -1) for s in ("Q", "K", "V")]), axis=1).mean()
            rel.append(D[-1] / norm)
            risk.append(common.history(paths[a])[0]["risk"][-1])
        dist, dist_err = common.mean_and_error(D) if D else (np.nan, np.nan)
        rows.append({"d": d, "scaling": scaling, "M": M, "seeds": len(D), "distance": dist, "distance_err": dist_err,
                     "relative": float(np.mean(rel)) if rel else np.nan,
                     "relative_err": common.mean_and_error(rel)[1] if rel else np.nan,
                     "risk": float(np.mean(risk)) if risk else np.nan})
    common.write_csv("d_and_m", options, ["d", "scaling", "M", "seeds", "distance", "distance_err", "relative",
                                          "risk"], rows)

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for scaling, marker in (("linear", "o"), ("quadratic", "s")):
        sel = [r for r in rows if r["scaling"] == scaling]
        label = "M = d" if scaling == "linear" else "M = d²/16"
        axes[0].errorbar([r["d"] for r in sel], [r["relative"] for r in sel], yerr=[r["relative_err"] for r in sel],
                         marker=marker, capsize=3, label=label + " (SE over seeds)")
        axes[1].plot([r["d"] for r in sel], [r["risk"] for r in sel], marker=marker, label=label)
    axes[0].set_ylabel(f"coupling distance to {size['factor']} M / initial |θ|")
    axes[1].set_ylabel("final risk R")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("token dimension d")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    common.save_figure(fig, "d_and_m", options)
    for r in rows:
        print(f"d={r['d']:<3} {r['scaling']:9} M={r['M']:<4} distance {r['distance']:.4e} +- {r['distance_err']:.1e} "
              f"(relative {r['relative']:.4e}), final R {r['risk']:.3e}")


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

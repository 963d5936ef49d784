#!/usr/bin/env python3
"""d and M coupled as [B] means it: [B]'s limit keeps the head dimension d_h
fixed while M grows, and leaves open how M must grow with the token
dimension d. Here d_h = 4 and d in {8, 16, 32, 64}, on the teacher task
with the scales normalised across d: init.sigma_qk = 0.5 sqrt(8/d) and
init.sigma_v = sqrt(8/d) for the student and the teacher (drawn with the
student's law), so the scores <Q x, K x'>, the values V x and a head's norm
|theta| do not grow with d, nor the targets' spread. At every d the same
widths M in {8, 16, 32, 64}, so that C(d) is compared over one range of M;
each run against a run of 2 M heads whose first M particles it
shares (the coupled streams of mean_field.py): the coupling distance
D = (1/(M L)) sum |theta_lm - theta'_lm| after the same tau (sharing half
the reference's particles scales D by the constant sqrt(1/2), which the fit's
prefactor absorbs). With the width law of the mean-field limit,
D = C(d) M^(-1/2); the growth C(d) ~ d^gamma says that M must grow like
d^(2 gamma) to keep D fixed.

Setting: N = 32, n = 16, L = 4, two seeds, 100 Euler steps of dtau = 0.02
(tau = 2).

Criteria, stated before the runs:
  1. the width law holds at every d: the power of D against M (a least-
     squares line through every seed's point, interval +- 2 standard errors)
     contains -1/2;
then, measured: C(d) = the mean of D sqrt(M) at each d, and gamma with its
interval from a line through log C against log d.

  python3 scripts/experiments/d_and_m.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

About 25 minutes on 2 cores (measured), two runs at a time: V is d x d, so a head at
d = 64 costs about 16 heads at d = 8, and the d = 64 runs (up to 128 heads)
dominate; --slurm spreads the runs over a cluster. Writes
d_and_m.csv (d, M, seeds, D and its standard error, D sqrt(M), the initial
and final R) and exp_d_and_m.png.
"""
import numpy as np

import common
import fits
from common import Run
from mean_field import coupling_distance, heads

FULL = dict(dims=[8, 16, 32, 64], widths=[8, 16, 32, 64], factor=2, seeds=[1, 2],
            L=4, N=32, steps=100, dtau=0.02)
QUICK = dict(dims=[4, 8], widths=[2, 4, 8], factor=2, seeds=[1, 2],
             L=2, N=8, steps=10, dtau=0.02)
COLUMNS = ["d", "M", "seeds", "distance", "distance_err", "scaled", "risk_start", "risk"]


def run_args(d, M, seed, size):
    scale = np.sqrt(8.0 / d)
    return {"data.task": "teacher", "data.teacher_heads": 4, "model.d": d, "model.head_dim": 4,
            "data.sequences": size["N"], "init.sigma_qk": float(f"{0.5 * scale:.6g}"),
            "init.sigma_v": float(f"{scale:.6g}"), "model.heads": M, "model.slices": size["L"], "init.seed": seed,
            "train.steps": size["steps"], "train.dtau": size["dtau"], "output.snapshot_every": size["steps"]}


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs, names = [], set()
    for d in size["dims"]:
        for M in size["widths"]:
            for seed in size["seeds"]:
                for width in (M, size["factor"] * M):
                    name = f"d{d}-M{width}-s{seed}"
                    if name not in names:
                        names.add(name)
                        runs.append(Run(name, run_args(d, width, seed, size)))
    paths = common.execute("d_and_m", runs, options)

    rows = []
    for d in size["dims"]:
        for M in size["widths"]:
            D, start, risk = [], [], []
            for seed in size["seeds"]:
                a, b = f"d{d}-M{M}-s{seed}", f"d{d}-M{size['factor'] * M}-s{seed}"
                if a not in paths or b not in paths:
                    continue
                D.append(coupling_distance(heads(paths[a]), heads(paths[b])))
                h = common.history(paths[a])[0]
                start.append(float(h["risk"][0]))
                risk.append(float(h["risk"][-1]))
            dist, err = common.mean_and_error(D) if D else (np.nan, np.nan)
            rows.append({"d": d, "M": M, "seeds": len(D), "distance": dist, "distance_err": err,
                         "scaled": dist * np.sqrt(M), "risk_start": float(np.mean(start)) if start else np.nan,
                         "risk": float(np.mean(risk)) if risk else np.nan, "points": D})
    common.write_csv("d_and_m", options, COLUMNS, rows)

    laws = {}
    for d in size["dims"]:
        pts = [(r["M"], v) for r in rows if r["d"] == d for v in r["points"]]
        laws[d] = fits.power_law([p[0] for p in pts], [p[1] for p in pts]) if len({p[0] for p in pts}) > 2 else None
    C = {d: float(np.mean([v * np.sqrt(r["M"]) for r in rows if r["d"] == d for v in r["points"]]))
         for d in size["dims"] if any(r["d"] == d and r["points"] for r in rows)}
    gamma = fits.power_law(list(C), list(C.values())) if len(C) > 2 else None
    plot(rows, laws, C, gamma, size, options)

    held = [law is not None and law.value - 2 * law.error <= -0.5 <= law.value + 2 * law.error for law in laws.values()]
    lines = [common.criterion("the width law D ~ M^-1/2 holds at every d (the power's interval contains -1/2)",
                              bool(held) and all(held),
                              "; ".join(f"d = {d}: " + (f"{law.value:.3f} +- {law.error:.3f}" if law else "no fit")
                                        for d, law in laws.items()))]
    common.write_criteria("d_and_m", options, lines)
    print("measured: C(d) = mean D sqrt(M): " + ", ".join(f"{v:.4g} (d = {d})" for d, v in C.items()))
    if gamma is not None:
        print(f"measured: C(d) ~ d^gamma, gamma = {gamma.value:.3f} +- {gamma.error:.3f} (interval "
              f"[{gamma.value - 2 * gamma.error:.3f}, {gamma.value + 2 * gamma.error:.3f}]): M must grow like "
              f"d^{2 * gamma.value:.2f} to keep D fixed")


def plot(rows, laws, C, gamma, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for i, d in enumerate(size["dims"]):
        mine = [r for r in rows if r["d"] == d and r["seeds"]]
        law = laws.get(d)
        axes[0].errorbar([r["M"] for r in mine], [r["distance"] for r in mine],
                         yerr=[r["distance_err"] for r in mine], marker="o", ms=3, capsize=2, color=f"C{i}",
                         label=f"d = {d}" + (f": M^{law.value:.2f}±{law.error:.2f}" if law else ""))
        axes[2].plot([r["M"] for r in mine], [r["risk"] for r in mine], "o-", ms=3, color=f"C{i}", label=f"d = {d}")
    axes[1].plot(list(C), list(C.values()), "o-", label=f"d^{gamma.value:.2f}±{gamma.error:.2f}" if gamma else "C(d)")
    axes[0].set_xlabel("heads per slice M")
    axes[0].set_ylabel(f"coupling distance D to {size['factor']} M heads")
    axes[1].set_xlabel("token dimension d (d_h = 4)")
    axes[1].set_ylabel("C(d) = mean D √M")
    axes[2].set_xlabel("heads per slice M")
    axes[2].set_ylabel("final risk R")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    common.save_figure(fig, "d_and_m", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

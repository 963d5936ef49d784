#!/usr/bin/env python3
"""Model size against data, in the in-context regime: how much data does a
width need before it learns in context rather than memorising?

Task icl-linear as in icl.py (d = 8, n = 16). Adam (dtau = 0.01) on
minibatches of 64 drawn from a fixed training set of N sequences, N in
{256, 1024, 4096, 16384}, against online data (a fresh batch every step:
N = infinity). Widths M in {4, 16} at L = 2, three seeds. Every run is
measured on the same 512 held-out sequences (streams of their own,
data.test_seed), as its risk over the zero predictor's.

Criteria, stated before the runs:
  1. at every width the smallest N overfits: its held-out ratio exceeds the
     online run's by more than two standard errors;
  2. at every width the largest N learns like online data: its held-out
     ratio is within two standard errors (or 5 %) of the online run's.

  python3 scripts/experiments/size_data.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

Writes size_data.csv (M, N (0: online), seeds, held-out ratio and its
standard error, the training set's ratio), size_data-criteria.txt and
exp_size_data.png.
"""
import numpy as np

import baselines
import common
from common import Run

FULL = dict(widths=[4, 16], L=2, sizes=[256, 1024, 4096, 16384], seeds=[1, 2, 3], steps=3000, every=500,
            batch=64, held_out=512, dtau=0.01)
QUICK = dict(widths=[2, 4], L=2, sizes=[16, 64], seeds=[1, 2], steps=30, every=10, batch=8, held_out=32,
             dtau=0.01)
ONLINE = 0  # the N of the online runs in the table


def run_name(M, N, seed):
    return f"M{M}-{'online' if N == ONLINE else f'N{N}'}-s{seed}"


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs = []
    for M in size["widths"]:
        for N in size["sizes"] + [ONLINE]:
            for seed in size["seeds"]:
                data = {"data.online": "true", "data.sequences": size["held_out"]} if N == ONLINE else \
                    {"data.sequences": N}
                runs.append(Run(run_name(M, N, seed), {
                    "data.task": "icl-linear", **data, "data.test_sequences": size["held_out"],
                    "train.method": "adam", "train.batch": size["batch"], "train.dtau": size["dtau"],
                    "train.steps": size["steps"], "output.history_every": size["every"],
                    "output.snapshot_every": size["steps"], "model.heads": M, "model.slices": size["L"],
                    "init.seed": seed, "init.sigma_v": 0.5}))
    if not options.from_sweep and not options.slurm:
        print(f"[size_data] {len(runs)} runs of {size['steps']} steps; the full mode took 20 minutes on 2 cores",
              flush=True)
    paths = common.execute("size_data", runs, options)
    run = common.mft_io.open_run(str(next(iter(paths.values()))))
    zero = baselines.zero_risk(run.test_targets)  # the same held-out set in every run
    run.close()

    rows = []
    for M in size["widths"]:
        for N in size["sizes"] + [ONLINE]:
            found, diverged = common.seed_histories(paths, [run_name(M, N, s) for s in size["seeds"]])
            test = [h["test_risk"][-1] / zero for h in found]
            t, t_err = common.mean_and_error(test or [np.nan])
            train = [h["risk"][-1] for h in found]
            rows.append({"M": M, "N": N, "seeds": len(size["seeds"]), "diverged": diverged, "test_ratio": t,
                         "test_ratio_err": t_err, "train_risk": float(np.mean(train)) if train else np.nan})
    common.write_csv("size_data", options, ["M", "N", "seeds", "diverged", "test_ratio", "test_ratio_err",
                                            "train_risk"], rows)
    for r in rows:
        n = "online" if r["N"] == ONLINE else r["N"]
        print(f"M={r['M']:<3} N={n!s:<6} held-out/zero {r['test_ratio']:.4f} +- {r['test_ratio_err']:.4f}, "
              f"training R {r['train_risk']:.3e}")

    lines = []
    for M in size["widths"]:
        of = {r["N"]: r for r in rows if r["M"] == M}
        online, small, large = of[ONLINE], of[size["sizes"][0]], of[size["sizes"][-1]]
        noise = lambda a: 2 * np.hypot(a["test_ratio_err"], online["test_ratio_err"])
        gap_small = small["test_ratio"] - online["test_ratio"]
        gap_large = abs(large["test_ratio"] - online["test_ratio"])
        lines.append(common.criterion(
            f"M = {M}: N = {small['N']} overfits (held-out ratio above online's by 2 SE)", gap_small > noise(small),
            f"{small['test_ratio']:.4f} vs online {online['test_ratio']:.4f}, 2 SE {noise(small):.4f}"))
        lines.append(common.criterion(
            f"M = {M}: N = {large['N']} learns like online data (within 2 SE or 5 %)",
            gap_large <= max(noise(large), 0.05 * online["test_ratio"]),
            f"{large['test_ratio']:.4f} vs online {online['test_ratio']:.4f}, 2 SE {noise(large):.4f}"))
    common.write_criteria("size_data", options, lines)

    plt = common.pyplot()
    fig, ax = plt.subplots(figsize=(5.6, 4))
    for i, M in enumerate(size["widths"]):
        sel = [r for r in rows if r["M"] == M and r["N"] != ONLINE]
        online = next(r for r in rows if r["M"] == M and r["N"] == ONLINE)
        ax.errorbar([r["N"] for r in sel], [r["test_ratio"] for r in sel], yerr=[r["test_ratio_err"] for r in sel],
                    marker="o", capsize=3, color=f"C{i}", label=f"M = {M}, fixed N")
        ax.axhspan(online["test_ratio"] - online["test_ratio_err"], online["test_ratio"] + online["test_ratio_err"],
                   color=f"C{i}", alpha=0.25, label=f"M = {M}, online (SE band)")
    ax.axhline(1.0, color="k", lw=0.8, label="predict zero")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(f"training sequences N (L = {size['L']}, {size['steps']} Adam steps of {size['batch']})")
    ax.set_ylabel("held-out risk / zero-predictor risk")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    common.save_figure(fig, "size_data", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

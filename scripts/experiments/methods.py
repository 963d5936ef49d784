#!/usr/bin/python3
"""Training methods: the gradient flow the theory analyses against minibatch
SGD (two batch sizes), Adam and mean-field Langevin (two temperatures), on
in-context linear regression and on the digits: the risk against tau and
against wall time, and whether global convergence (R falling by orders of
magnitude, towards 0 where the task allows it) survives each.

  /usr/bin/python3 scripts/experiments/methods.py [--quick] [--jobs J] [--slurm | --from-sweep JOB]

Writes methods.csv (task, method, seeds, final R and its standard error,
R_final / R_0, held-out risk and accuracy), methods_timing.csv (seconds per
step: wall time, which no rerun reproduces) and exp_methods.png (seed 1's
curves).
"""
import numpy as np

import common
from common import Run
from width_depth import digits_file

FULL = dict(seeds=[1, 2, 3], M=16, L=4, icl_sequences=64, digits_train=256, digits_test=256, steps=200,
            dtau=0.05, adam_dtau=0.01, batches=(4, 16), temperatures=(1e-4, 1e-3))
QUICK = dict(seeds=[1], M=4, L=2, icl_sequences=16, digits_train=32, digits_test=32, steps=10,
             dtau=0.05, adam_dtau=0.01, batches=(2, 4), temperatures=(1e-4, 1e-3))


def methods(size, N):
    """(label, mft keys) of every method; sgd batches are N / divisor."""
    out = [("flow", {"train.method": "flow", "train.dtau": size["dtau"]})]
    for divisor in size["batches"]:
        out.append((f"sgd b={N // divisor}", {"train.method": "sgd", "train.batch": N // divisor,
                                              "train.dtau": size["dtau"]}))
    out.append(("adam", {"train.method": "adam", "train.dtau": size["adam_dtau"]}))
    for T in size["temperatures"]:
        out.append((f"Langevin T={T:g}", {"train.method": "flow", "train.temperature": T,
                                          "train.dtau": size["dtau"]}))
    return out


def task_args(task, size, options):
    if task == "icl":
        N = size["icl_sequences"]
        return N, {"data.task": "icl-linear", "data.sequences": N, "data.test_sequences": N, "init.sigma_v": 0.5}
    return size["digits_train"], {"data.task": "file", "data.file": digits_file(options, size["digits_train"], size["digits_test"]), "readout.kind": "mean",
                                  "readout.dim": 10, "loss.kind": "cross-entropy"}


def slug(label):
    return label.replace(" ", "-").replace("=", "")


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs, tasks = [], {}
    for task in ("icl", "digits"):
        N, args = task_args(task, size, options)
        tasks[task] = methods(size, N)
        for label, keys in tasks[task]:
            for seed in size["seeds"]:
                runs.append(Run(f"{task}-{slug(label)}-s{seed}", {
                    **args, **keys, "model.heads": size["M"], "model.slices": size["L"], "init.seed": seed,
                    "train.steps": size["steps"], "output.snapshot_every": size["steps"]}))
    paths = common.execute("methods", runs, options)

    rows, curves = [], {}
    for task, listed in tasks.items():
        for label, _ in listed:
            names = [f"{task}-{slug(label)}-s{seed}" for seed in size["seeds"]]
            found, _ = common.seed_histories(paths, names)
            final = [h["risk"][-1] for h in found]
            ratio = [h["risk"][-1] / h["risk"][0] for h in found]
            test = [h["test_risk"][-1] if "test_risk" in h else np.nan for h in found]
            acc = [h["test_accuracy"][-1] if "test_accuracy" in h else np.nan for h in found]
            per_step = [(h["wall_time"][-1] - h["wall_time"][0]) / max(1, h["step"][-1] - h["step"][0])
                        for h in found]
            if names[0] in paths:  # the first seed's curve, when it did not diverge
                curves[(task, label)] = found[0]
            r, r_err = common.mean_and_error(final) if final else (np.nan, np.nan)
            rows.append({"task": task, "method": label, "seeds": len(final),
                         "diverged": len(size["seeds"]) - len(final), "risk": r, "risk_err": r_err,
                         "reduction": float(np.mean(ratio)) if ratio else np.nan,
                         "test_risk": float(np.mean(test)) if test else np.nan,
                         "test_accuracy": float(np.mean(acc)) if acc else np.nan,
                         "seconds_per_step": float(np.mean(per_step)) if per_step else np.nan})
    common.write_csv("methods", options, ["task", "method", "seeds", "diverged", "risk", "risk_err", "reduction",
                                          "test_risk", "test_accuracy"], rows)
    # Wall time apart: it does not reproduce, the numbers above do.
    common.write_csv("methods_timing", options, ["task", "method", "seconds_per_step"], rows)

    plt = common.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4))
    for i, task in enumerate(("icl", "digits")):
        for label, _ in tasks[task]:
            if (task, label) not in curves:
                continue
            h = curves[(task, label)]
            axes[i][0].semilogy(h["tau"], h["risk"], label=label)
            axes[i][1].semilogy(h["wall_time"] - h["wall_time"][0], h["risk"], label=label)
        axes[i][0].set_xlabel("τ")
        axes[i][1].set_xlabel("wall time (s, one rank)")
        for ax in axes[i]:
            ax.set_ylabel(f"{task}: risk R")
            ax.grid(alpha=0.3)
        axes[i][0].legend(fontsize=7)
    common.save_figure(fig, "methods", options)
    for r in rows:
        print(f"{r['task']:6} {r['method']:18} R = {r['risk']:.3e} +- {r['risk_err']:.1e} (x{r['reduction']:.1e} of R0), "
              f"held-out R {r['test_risk']:.3e}, accuracy {r['test_accuracy']:.3f}, {r['seconds_per_step']:.4f} s/step")


if __name__ == "__main__":
    main()

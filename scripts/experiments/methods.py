#!/usr/bin/env python3
"""Training methods to a plateau: the gradient flow the theory analyses
against minibatch SGD (two batch sizes), Adam and mean-field Langevin (two
temperatures), on in-context linear regression (256 fixed training
sequences, 512 held out) and on the digits (256 / 256), M = 16, L = 4,
1500 steps (tau = 150; Adam dtau = 0.01), three seeds.

Where a run ends (stated before the runs): "below 0.01" when its training
risk is below 0.01, else "plateau" when it fell by less than 5 % over the
last fifth of the run, else "still falling".

Criteria, stated before the runs, for each task:
  1. the Langevin plateau risk grows with the temperature (T = 1e-3 above
     T = 1e-4 by two standard errors: a noise floor of order T);
  2. every run ends on a plateau or below 0.01.
Baselines drawn: the zero predictor (icl), logistic regression and nearest
centroid on the pixels (digits).

  python3 scripts/experiments/methods.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

Writes methods.csv (task, method, seeds, final R and its standard error,
held-out ratio or accuracy and its standard error, where the runs ended),
methods_timing.csv (seconds per step: wall time, which no rerun reproduces),
methods-criteria.txt and exp_methods.png (mean and SE band over seeds).
"""
import numpy as np

import baselines
import common
import width_depth
from common import Run
from width_depth import digits_file

FULL = dict(seeds=[1, 2, 3], M=16, L=4, icl_sequences=256, held_out=512, digits_train=256, digits_test=256,
            steps=1500, every=25, dtau=0.1, adam_dtau=0.01, batches=(4, 16), temperatures=(1e-4, 1e-3))
QUICK = dict(seeds=[1, 2], M=4, L=2, icl_sequences=16, held_out=16, digits_train=32, digits_test=32, steps=20,
             every=2, dtau=0.05, adam_dtau=0.01, batches=(2, 4), temperatures=(1e-4, 1e-3))
ZERO, PLATEAU = common.ZERO, common.PLATEAU  # where a run ends (common.ending)


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
        return N, {"data.task": "icl-linear", "data.sequences": N, "data.test_sequences": size["held_out"],
                   "init.sigma_v": 0.5}
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
                    "train.steps": size["steps"], "output.history_every": size["every"],
                    "output.snapshot_every": size["steps"]}))
    if not options.from_sweep and not options.slurm:
        print(f"[methods] {len(runs)} runs of {size['steps']} steps; the full mode takes about 90 minutes on 2 cores (two runs at a time)",
              flush=True)
    paths = common.execute("methods", runs, options)
    run = common.mft_io.open_run(str(paths[next(n for n in paths if n.startswith("icl-"))]))
    zero = baselines.zero_risk(run.test_targets)  # the icl runs share their held-out set
    run.close()
    digits = task_args("digits", size, options)[1]["data.file"]
    pixel = width_depth.pixel_baselines(digits)

    rows, curves = [], {}
    for task, listed in tasks.items():
        for label, _ in listed:
            found, diverged = common.seed_histories(paths, [f"{task}-{slug(label)}-s{seed}" for seed in size["seeds"]])
            held = [h["test_risk"][-1] / zero if task == "icl" else h["test_accuracy"][-1] for h in found]
            per_step = [(h["wall_time"][-1] - h["wall_time"][0]) / max(1, h["step"][-1] - h["step"][0])
                        for h in found]
            ends = [common.ending(h) for h in found]
            r, r_err = common.mean_and_error([h["risk"][-1] for h in found] or [np.nan])
            t, t_err = common.mean_and_error(held or [np.nan])
            rows.append({"task": task, "method": label, "seeds": len(size["seeds"]), "diverged": diverged,
                         "risk": r, "risk_err": r_err, "held_out": t, "held_out_err": t_err,
                         "ending": common.endings_text(ends),
                         "plateaued": sum(e != common.ENDINGS[2] for e in ends),
                         "seconds_per_step": float(np.mean(per_step)) if per_step else np.nan})
            if found and all(len(h["step"]) == len(found[0]["step"]) for h in found):
                curves[(task, label)] = (found[0]["tau"], np.array([h["risk"] for h in found]),
                                         np.array([h["test_risk"] / zero if task == "icl" else h["test_accuracy"]
                                                   for h in found]))
    common.write_csv("methods", options, ["task", "method", "seeds", "diverged", "risk", "risk_err", "held_out",
                                          "held_out_err", "ending"], rows)
    # Wall time apart: it does not reproduce, the numbers above do.
    common.write_csv("methods_timing", options, ["task", "method", "seconds_per_step"], rows)
    for r in rows:
        measure = "held-out/zero" if r["task"] == "icl" else "held-out accuracy"
        print(f"{r['task']:6} {r['method']:18} R = {r['risk']:.3e} +- {r['risk_err']:.1e}, {measure} "
              f"{r['held_out']:.4f} +- {r['held_out_err']:.4f}; {r['ending']}")
    print(f"baselines: icl zero-predictor risk {zero:.4f} (ratio 1); digits logistic regression "
          f"{pixel['logistic']:.3f}, nearest centroid {pixel['centroid']:.3f}")

    lines = []
    T_low, T_high = (f"Langevin T={T:g}" for T in size["temperatures"])
    for task in ("icl", "digits"):
        of = {r["method"]: r for r in rows if r["task"] == task}
        low, high = of[T_low], of[T_high]
        noise = 2 * np.hypot(low["risk_err"], high["risk_err"])
        lines.append(common.criterion(
            f"{task}: the Langevin plateau risk grows with the temperature ({T_high} above {T_low} by 2 SE)",
            high["risk"] - low["risk"] > noise,
            f"{high['risk']:.4e} vs {low['risk']:.4e}, 2 SE {noise:.1e}"))
        done = sum(r["plateaued"] for r in of.values())
        total = sum(r["seeds"] - r["diverged"] for r in of.values())
        lines.append(common.criterion(
            f"{task}: every run ends on a plateau or below {ZERO} (R falls < {PLATEAU:.0%} over its last fifth)",
            done == total, f"{done} of {total} runs; still falling: " +
            (", ".join(r["method"] for r in of.values() if r["plateaued"] < r["seeds"] - r["diverged"]) or "none")))
    common.write_criteria("methods", options, lines)
    plot(tasks, curves, zero, pixel, size, options)


def plot(tasks, curves, zero, pixel, size, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4))
    for i, task in enumerate(("icl", "digits")):
        for j, (label, _) in enumerate(tasks[task]):
            if (task, label) not in curves:
                axes[i][0].plot([], [], color=f"C{j}", label=f"{label}: diverged or missing")
                continue
            tau, risk, held = curves[(task, label)]
            for ax, values in ((axes[i][0], risk), (axes[i][1], held)):
                mean = values.mean(axis=0)
                ax.plot(tau, mean, color=f"C{j}", label=label)
                if len(values) > 1:
                    err = values.std(axis=0, ddof=1) / np.sqrt(len(values))
                    ax.fill_between(tau, mean - err, mean + err, color=f"C{j}", alpha=0.2)
        axes[i][0].set_yscale("log")
        axes[i][0].set_ylabel(f"{task}: training risk R (mean, SE band)")
        if task == "icl":
            axes[i][1].axhline(1.0, color="k", lw=0.8, label="predict zero")
            axes[i][1].set_yscale("log")
            axes[i][1].set_ylabel("icl: held-out risk / zero-predictor risk")
        else:
            axes[i][1].axhline(pixel["logistic"], color="k", ls="-.", lw=0.8, label="logistic regression")
            axes[i][1].axhline(pixel["centroid"], color="k", ls=":", lw=0.8, label="nearest centroid")
            axes[i][1].set_ylabel("digits: held-out accuracy")
        for ax in axes[i]:
            ax.set_xlabel("training time tau")
            ax.grid(alpha=0.3, which="both")
        axes[i][1].legend(fontsize=6)
    axes[0][0].legend(fontsize=6)
    common.save_figure(fig, "methods", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

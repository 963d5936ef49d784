#!/usr/bin/python3
"""Width and depth ([A]'s figure): the final training risk (and the held-out
risk and accuracy) against the heads per slice M at fixed depth L, and
against L at fixed M, on in-context linear regression and on the digits.
[A] saw the loss reach ~0 once heads >= ~20 at depth 6, or depth >= ~16 at 8
heads (ViT on CIFAR-10): where is the threshold here?

  /usr/bin/python3 scripts/experiments/width_depth.py [--quick] [--jobs J] [--slurm | --from-sweep JOB]

Writes width_depth.csv (task, sweep, M, L, seeds, how many of them
diverged, final risk mean and standard error over the others, held-out risk,
held-out accuracy for the digits) and exp_width_depth.png.
"""
import subprocess
import sys
from pathlib import Path

import numpy as np

import common
from common import Run

FULL = dict(widths=[1, 2, 4, 8, 16, 32, 64], fixed_L=4, depths=[1, 2, 4, 8, 16], fixed_M=8,
            seeds=[1, 2, 3], steps=150, dtau=0.05, icl_sequences=128, digits_train=256, digits_test=256)
QUICK = dict(widths=[1, 4], fixed_L=2, depths=[1, 2], fixed_M=2, seeds=[1], steps=10, dtau=0.05,
             icl_sequences=16, digits_train=32, digits_test=32)


def digits_file(options, size):
    path = Path(options.runs) / f"digits-{size['digits_train']}-{size['digits_test']}.h5"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(common.ROOT / "scripts" / "make_digits.py"), "--output", str(path),
                        "--train-size", str(size["digits_train"]), "--test-size", str(size["digits_test"]),
                        "--force"], check=True, stdout=subprocess.DEVNULL)
    return path


def task_args(task, size, options):
    if task == "icl":
        return {"data.task": "icl-linear", "data.sequences": size["icl_sequences"],
                "data.test_sequences": size["icl_sequences"], "init.sigma_v": 0.5}
    return {"data.task": "file", "data.file": digits_file(options, size), "readout.kind": "mean",
            "readout.dim": 10, "loss.kind": "cross-entropy"}


def grid(size):
    """(sweep, M, L) of every model: the width sweep, then the depth sweep
    (the model they share appears in both)."""
    return [("width", M, size["fixed_L"]) for M in size["widths"]] + \
           [("depth", size["fixed_M"], L) for L in size["depths"]]


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs, keys = [], []
    for task in ("icl", "digits"):
        for sweep, M, L in grid(size):
            for seed in size["seeds"]:
                name = f"{task}-M{M}-L{L}-s{seed}"
                if name in keys:
                    continue
                keys.append(name)
                runs.append(Run(name, {**task_args(task, size, options), "model.heads": M, "model.slices": L,
                                       "init.seed": seed, "train.steps": size["steps"], "train.dtau": size["dtau"],
                                       "output.snapshot_every": size["steps"]}))
    paths = common.execute("width_depth", runs, options)

    rows = []
    for task in ("icl", "digits"):
        for sweep, M, L in grid(size):
            found, diverged = common.seed_histories(paths, [f"{task}-M{M}-L{L}-s{seed}" for seed in size["seeds"]])
            final = {k: [h[k][-1] for h in found if k in h] for k in ("risk", "test_risk", "test_accuracy")}
            row = {"task": task, "sweep": sweep, "M": M, "L": L, "seeds": len(size["seeds"]), "diverged": diverged}
            for k, values in final.items():
                mean, err = common.mean_and_error(values) if values else (float("nan"), float("nan"))
                row[k], row[k + "_err"] = mean, err
            rows.append(row)
    columns = ["task", "sweep", "M", "L", "seeds", "diverged", "risk", "risk_err", "test_risk", "test_risk_err",
               "test_accuracy", "test_accuracy_err"]
    common.write_csv("width_depth", options, columns, rows)

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for ax, sweep, var in ((axes[0], "width", "M"), (axes[1], "depth", "L")):
        for task, color in (("icl", "C0"), ("digits", "C1")):
            sel = [r for r in rows if r["task"] == task and r["sweep"] == sweep]
            x = [r[var] for r in sel]
            ax.errorbar(x, [r["risk"] for r in sel], yerr=[r["risk_err"] for r in sel], marker="o",
                        color=color, label=f"{task} train")
            ax.errorbar(x, [r["test_risk"] for r in sel], yerr=[r["test_risk_err"] for r in sel], marker="s",
                        ls="--", color=color, label=f"{task} held-out")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        fixed = f"L = {size['fixed_L']}" if sweep == "width" else f"M = {size['fixed_M']}"
        ax.set_xlabel(f"{var} ({fixed})")
        ax.set_ylabel(f"risk after {size['steps']} steps")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    common.save_figure(fig, "width_depth", options)

    for task in ("icl", "digits"):
        for r in rows:
            if r["task"] == task:
                acc = f", held-out accuracy {r['test_accuracy']:.3f}" if np.isfinite(r["test_accuracy"]) else ""
                div = f" ({r['diverged']} of {r['seeds']} seeds diverged)" if r["diverged"] else ""
                print(f"{task:6} {r['sweep']:5} M={r['M']:<3} L={r['L']:<3} R = {r['risk']:.3e} "
                      f"+- {r['risk_err']:.1e}, held-out R = {r['test_risk']:.3e}{acc}{div}")


if __name__ == "__main__":
    main()

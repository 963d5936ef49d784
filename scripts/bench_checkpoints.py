#!/usr/bin/env python3
"""The adjoint's checkpoints measured: for each size, mft-bench with every
step of the depth trajectory kept and again under run.max_memory set to a
quarter (--factor) of that trajectory, where depth.checkpoint_slices auto
chooses the checkpoints; the training step's time (the fastest of
--train-steps) and the peak memory per rank of each, in one run of this
script; and one training step of mft train each way, whose particles must
agree (the checkpointed gradient is the stored one's bit for bit).

  scripts/bench.sh --checkpoints [--ranks 2] [--factor 4]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Two sizes whose trajectory dominates the run's memory: many short
# sequences, and fewer long ones. mft-bench's options, then the same as keys.
SIZES = [
    {"N": 512, "n": 16, "d": 32, "dh": 16, "M": 4, "L": 32, "k": 4},
    {"N": 64, "n": 128, "d": 32, "dh": 16, "M": 4, "L": 32, "k": 4},
]
KEYS = {"N": "data.sequences", "n": "data.tokens", "d": "model.d", "dh": "model.head_dim", "M": "model.heads",
        "L": "model.slices", "k": "depth.steps_per_slice"}


def mpirun(ranks):
    cmd = [os.environ.get("MPIEXEC", "mpirun"), "-q", "-n", str(ranks)]
    if (os.cpu_count() or 1) < ranks:
        cmd.append("--oversubscribe")
    return cmd


def bench(args, size, extra):
    cmd = mpirun(args.ranks) + [str(args.bench), "--json", "--no-ntk", "--no-batches", "--no-kernel", "--no-mixed",
                                "--repeat", "1", "--train-steps", str(args.train_steps)]
    for key, value in size.items():
        cmd += ["--" + key, str(value)]
    done = subprocess.run(cmd + extra, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"mft-bench exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def one_step(args, size, extra, path):
    """One training step into path; its header."""
    cmd = mpirun(args.ranks) + [str(args.mft), "train", "--data.task", "gaussian", "--train.steps", "1",
                                "--output.snapshot_every", "1", "--output.file", str(path)]
    for key, value in size.items():
        cmd += ["--" + KEYS[key], str(value)]
    done = subprocess.run(cmd + extra, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"mft train exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def particle_difference(a, b):
    import h5py
    import numpy as np
    worst = 0.0
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        for name in fa["particles"]:
            if name in ("step", "tau"):
                continue
            x, y = fa["particles/" + name][-1], fb["particles/" + name][-1]
            worst = max(worst, float(np.abs(x - y).max() / max(np.abs(x).max(), 1e-300)))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=int(os.environ.get("MFT_RANKS", "2")))
    parser.add_argument("--factor", type=float, default=4.0,
                        help="the full trajectory over run.max_memory")
    parser.add_argument("--train-steps", type=int, default=2)
    build = Path(os.environ.get("MFT_BUILD", HERE.parent / "build"))
    parser.add_argument("--bench", default=str(build / "apps" / "mft-bench"))
    parser.add_argument("--mft", default=str(build / "apps" / "mft"))
    args = parser.parse_args()

    print(f"| N | n | d | M | L | k | trajectory, every step (MiB) | run.max_memory (MiB) | checkpoints |"
          f" trajectory (MiB) | peak RSS (MiB) | step (s) | step, checkpoints (s) | time ratio |"
          f" particles after a step, max rel. difference |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for i, size in enumerate(SIZES):
            full = bench(args, size, ["--depth.checkpoint_slices", "0"])
            limit = int(full["trajectory_mib"] / args.factor)
            bounded = bench(args, size, ["--run.max_memory", f"{limit}M"])
            header = one_step(args, size, ["--run.max_memory", f"{limit}M"], Path(work) / f"b{i}.h5")
            one_step(args, size, ["--depth.checkpoint_slices", "0"], Path(work) / f"f{i}.h5")
            plan = re.search(r"a checkpoint every (\w+)", header)
            spacing = ("every " + plan.group(1).replace("slice", "1")) if plan else "none"
            diff = particle_difference(Path(work) / f"f{i}.h5", Path(work) / f"b{i}.h5")
            s0 = full["phases"]["training_step"]["seconds"]
            s1 = bounded["phases"]["training_step"]["seconds"]
            print(f"| {size['N']} | {size['n']} | {size['d']} | {size['M']} | {size['L']} | {size['k']} | "
                  f"{full['trajectory_mib']:.0f} | {limit} | {spacing} | {bounded['trajectory_mib']:.0f} | "
                  f"{full['peak_rss_mib']:.0f} -> {bounded['peak_rss_mib']:.0f} | {s0:.3f} | {s1:.3f} | "
                  f"{s1 / s0:.2f} | {diff:.1e} |", flush=True)
    print(f"\n{args.ranks} ranks, RK4; the step is the fastest of {args.train_steps}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Compares the particle gradients of two mft programs (say the build before
a kernel change and the one after) on every registered variant: each runs
one Euler step of dtau = 1 of the same small problem, the step's velocity
-G = theta(1) - theta(0) is read from both run files, and the largest
difference relative to the largest |G| is printed per variant. Exits 1 when
one exceeds --tolerance (default 1e-13) or a run fails in one program only.

Variants: every score map `mft --choices model.attention` lists, with and
without the causal mask; every loss and readout (two outputs); every token
norm; the MLP beside the heads; a token dimension above 16 (the kernel's
run-time d).

  python3 scripts/compare_gradients.py OLD/apps/mft NEW/apps/mft [--ranks 2]
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from mft.tool_python import analysis_python

analysis_python()  # a python3 without numpy, h5py runs this again under the one scripts/env.sh finds
import numpy as np  # noqa: E402


def choices(mft, key):
    return subprocess.run([mft, "--choices", key], check=True, capture_output=True, text=True).stdout.split()


def variants(mft):
    small = ["--model.heads", "12", "--model.slices", "4", "--data.sequences", "24", "--data.tokens", "9",
             "--data.task", "teacher", "--init.sigma_qk", "0.1"]
    out = []
    for attention in choices(mft, "model.attention"):
        for causal in ("false", "true"):
            out.append((f"{attention}{' causal' if causal == 'true' else ''}",
                        small + ["--model.attention", attention, "--model.causal", causal]))
    for loss in choices(mft, "loss.kind"):
        out.append((f"loss {loss}", small + ["--loss.kind", loss, "--readout.dim", "2"]))
    for readout in choices(mft, "readout.kind"):
        out.append((f"readout {readout}", small + ["--readout.kind", readout, "--readout.dim", "2"]))
    for norm in choices(mft, "model.norm"):
        out.append((f"norm {norm}", small + ["--model.norm", norm]))
    out.append(("mlp", small + ["--model.mlp_particles", "4", "--model.mlp_width", "6"]))
    out.append(("d = 20", ["--model.d", "20", "--model.head_dim", "5", "--model.heads", "9", "--model.slices", "3",
                           "--data.sequences", "10", "--data.tokens", "5", "--data.task", "gaussian"]))
    return out


def velocity(path):
    import h5py
    with h5py.File(path, "r") as f:
        return {k: f["particles/" + k][1] - f["particles/" + k][0] for k in f["particles"] if k not in ("step", "tau")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", help="the mft program to compare against")
    parser.add_argument("candidate", help="the mft program compared")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--tolerance", type=float, default=1e-13)
    args = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for name, keys in variants(args.candidate):
            files, status = [], []
            for i, program in enumerate((args.baseline, args.candidate)):
                path = Path(work) / f"{i}.h5"
                run = subprocess.run(["mpirun", "-q", "--oversubscribe", "-n", str(args.ranks), program, "train", *keys,
                                      "--train.steps", "1", "--train.dtau", "1", "--output.snapshot_every", "1",
                                      "--output.file", str(path), "--output.overwrite", "true"],
                                     capture_output=True, text=True)
                status.append(run.returncode)
                files.append(path)
            if status[0] != status[1]:
                print(f"{name:24s} exit {status[0]} against {status[1]}: FAILS")
                failed = True
                continue
            if status[0] != 0:
                print(f"{name:24s} both runs exit {status[0]} (diverged or refused): not compared")
                continue
            a, b = velocity(files[0]), velocity(files[1])
            scale = max(np.abs(v).max() for v in a.values())
            worst = max(np.abs(a[k] - b[k]).max() for k in a) / scale
            verdict = "ok" if worst <= args.tolerance else "FAILS"
            failed |= worst > args.tolerance
            print(f"{name:24s} largest |dG| / max |G| = {worst:.2e}  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

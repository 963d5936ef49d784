#!/usr/bin/env python3
"""The benchmark grid: mft-bench (and its PyTorch peer, where it is
installed and fast enough) over the token dimension d = d_h in {8, 32, 64,
128}, the sequence length n in {16, 64, 256, 1024} and the causal mask off
and on, at the default initialisation.

Each size keeps the tokens per rank group about the same (N n = 4096:
N = 256 at n = 16 down to 4 at n = 1024) with M = 16 heads in L = 8 slices,
so that a size's cost grows with n and d as attention's does. Per size: the
forward solve's rate as a fraction of the DGEMM rate of the same ranks
measured in the same run, the training step in forward solves, the PyTorch
peer's step over mft's (the peer is skipped, and the table says so, where
its estimated step, from its forward solve, exceeds --torch-limit seconds,
or where python3-torch is missing), and the peak memory per rank. Prints a
Markdown table (docs/PERFORMANCE.md holds one with the machine named).

  scripts/bench.sh --grid [--ranks 2] [--d 8,32] [--n 16,64] [--causal false,true]
"""
import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOKENS = 4096  # N n: the tokens of a size


def cpu_name():
    """The CPU's model name (Linux), else the platform's word for it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def mpirun(ranks):
    cmd = [os.environ.get("MPIEXEC", "mpirun"), "-q", "-n", str(ranks)]
    if (os.cpu_count() or 1) < ranks:
        cmd.append("--oversubscribe")
    return cmd


def mft_bench(args, d, n, causal):
    N = max(1, TOKENS // n)
    cmd = mpirun(args.ranks) + [str(args.bench), "--json", "--no-ntk", "--no-batches", "--no-kernel", "--no-mixed",
                                "--repeat", "2", "--train-steps", "2", "--N", str(N), "--n", str(n),
                                "--d", str(d), "--dh", str(d), "--M", "16", "--L", "8", "--causal", causal]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        return None, f"mft-bench exit {done.returncode}: {last}"
    return json.loads(done.stdout), ""


def torch_peer(args, d, n, causal, mft):
    """The peer's step in seconds, or None and why it was skipped."""
    N = max(1, TOKENS // n)
    cmd = [args.python, str(HERE / "bench_torch.py"), "--json", "--threads", str(args.ranks), "--N", str(N),
           "--n", str(n), "--d", str(d), "--dh", str(d), "--M", "16", "--L", "8", "--steps", "1",
           "--repeat", "1", "--causal", causal, "--step-limit", str(args.torch_limit)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        return None, "peer failed: " + ((done.stderr.strip().splitlines() or ["?"])[-1])
    try:
        peer = json.loads(done.stdout)
    except ValueError:
        return None, done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "peer printed nothing"
    if "skipped" in peer:
        return None, peer["skipped"]
    return peer["training_step"] / mft["phases"]["training_step"]["seconds"], ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", type=int, default=int(os.environ.get("MFT_RANKS", "2")))
    parser.add_argument("--d", default="8,32,64,128", help="token dimensions (d_h = d)")
    parser.add_argument("--n", default="16,64,256,1024", help="sequence lengths")
    parser.add_argument("--causal", default="false,true")
    parser.add_argument("--torch-limit", type=float, default=60.0,
                        help="skip the peer where its step would take longer than this many seconds")
    parser.add_argument("--bench", default=str(Path(os.environ.get("MFT_BUILD", HERE.parent / "build"))
                                               / "apps" / "mft-bench"))
    parser.add_argument("--python", default=os.environ.get("MFT_PYTHON", sys.executable))
    args = parser.parse_args()
    dims = [int(x) for x in args.d.split(",")]
    lengths = [int(x) for x in args.n.split(",")]
    masks = args.causal.split(",")

    print(f"mft-bench grid on {args.ranks} ranks, {cpu_name()}: "
          f"N n = {TOKENS}, M = 16, L = 8, RK4, d_h = d, default initialisation")
    print()
    print("| d | n | N | causal | forward (of DGEMM) | step (forwards) | PyTorch step / mft step | peak MiB per rank |"
          " note |")
    print("|---|---|---|---|---|---|---|---|---|")
    blas = ""
    for d in dims:
        for n in lengths:
            for causal in masks:
                N = max(1, TOKENS // n)
                mft, why = mft_bench(args, d, n, causal)
                if mft is None:
                    print(f"| {d} | {n} | {N} | {causal} | - | - | - | - | {why} |", flush=True)
                    continue
                blas = mft.get("blas_core") or blas
                ratio, skipped = torch_peer(args, d, n, causal, mft)
                peer = f"{ratio:.1f}" if ratio is not None else "-"
                p = mft["phases"]
                print(f"| {d} | {n} | {N} | {causal} | {p['forward_solve']['dgemm_fraction']:.2f} | "
                      f"{mft['step_over_forward']:.2f} | {peer} | {mft['peak_rss_mib']:.0f} | {skipped} |", flush=True)
    print()
    print(f"OpenBLAS core {blas or '?'}; DGEMM measured by each run on its own ranks")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Collects the runs of a sweep: the final risk R, objective Q and step count
of every run into a table (stdout and CSV), and plots the final R against the
width M at fixed depth L and against L at fixed M (the shape of [A]'s
experiments: small models stall, wide or deep ones reach R ~ 0).

  /usr/bin/python3 scripts/collect_sweep.py RUN.h5 [RUN.h5 ...] [--csv sweep.csv] [--plot sweep.png]
"""
import argparse
import collections
import csv
import os
import sys

import mft_io


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="mft train run files")
    parser.add_argument("--csv", help="CSV file to write")
    parser.add_argument("--plot", help="PNG file to write")
    args = parser.parse_args()

    rows = []
    for path in args.runs:
        run = mft_io.open_run(path)
        hist = run.history
        if hist is None or len(hist["step"]) == 0:
            sys.exit(f"error: {path}: no /history (not a training run)")
        cfg = run.config
        rows.append({"file": os.path.basename(path), "M": int(cfg["model.heads"]), "L": int(cfg["model.slices"]),
                     "steps": int(hist["step"][-1]), "tau": float(hist["tau"][-1]),
                     "R": float(hist["risk"][-1]), "Q": float(hist["objective"][-1]),
                     "R0": float(hist["risk"][0])})
    rows.sort(key=lambda r: (r["L"], r["M"], r["file"]))
    fields = ["file", "M", "L", "steps", "tau", "R0", "R", "Q"]
    print(f"{'file':<28} {'M':>6} {'L':>5} {'steps':>7} {'tau':>9} {'R initial':>12} {'R final':>12} {'Q final':>12}")
    for r in rows:
        print(f"{r['file']:<28} {r['M']:>6} {r['L']:>5} {r['steps']:>7} {r['tau']:>9.4g} {r['R0']:>12.5e}"
              f" {r['R']:>12.5e} {r['Q']:>12.5e}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for r in rows:
                w.writerow({k: r[k] for k in fields})
        print(f"wrote {args.csv}")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
        by_L, by_M = collections.defaultdict(list), collections.defaultdict(list)
        for r in rows:
            by_L[r["L"]].append((r["M"], r["R"]))
            by_M[r["M"]].append((r["L"], r["R"]))
        for L, pts in sorted(by_L.items()):
            pts.sort()
            a.loglog(*zip(*pts), "o-", label=f"L = {L}")
        for M, pts in sorted(by_M.items()):
            pts.sort()
            b.loglog(*zip(*pts), "s-", label=f"M = {M}")
        a.set_xlabel("heads per slice M")
        b.set_xlabel("depth slices L")
        for ax in (a, b):
            ax.set_ylabel("final risk R")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        a.set_title("final R against width at fixed depth", fontsize=9)
        b.set_title("final R against depth at fixed width", fontsize=9)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()

"""The communication model of docs/SCALING.md, and the collector of the
scaling series that scripts/slurm/scaling.sbatch runs.

  python3 -m mft.scaling model [--N 8192 --n 32 --d 16 --dh 16 --M 512 --L 32 ...]
      predicted time per training step, its compute and communication parts,
      and the strong- and weak-scaling efficiency from 64 to 4,096 ranks on
      the best grid (head ranks x sequence groups) of each rank count
  python3 -m mft.scaling collect BENCH.json ... [--csv C] [--plot P]
      measured series (mft-bench --json per rank count): efficiency table

A training step on a grid of P_h head ranks x P_s sequence groups (MODEL.md
§3, §5; one field evaluation per RK stage, s stages, k steps per slice):
  compute     (1 + v) L k s F / (P r) + L k s o,  F = N M (4 n d_h d + 2 n^2 d_h + 2 n^2 d + 2 n d^2)
              flops of one evaluation, v = 2.43 the VJP's flops per forward's, r the kernel
              rate of one rank, o the fixed cost of a stage (forward and adjoint)
  per stage   one all-reduce of the group's token state, 8 (N / P_s) n d bytes, on P_h ranks,
              forward and adjoint: 2 L k s of them
  per step    one all-reduce of this rank's particle gradient, 8 L (M / P_h)(2 d_h d + d^2)
              bytes, on P_s ranks; the predictions gathered (8 N d_out bytes); a few scalars
All-reduce of m bytes on p ranks (alpha-beta, the better of recursive
doubling and reduce-scatter + all-gather):
  T(p, m) = min(ceil(log2 p)(alpha + m beta), 2 ceil(log2 p) alpha + 2 (p - 1)/p m beta)
and an all-gather of m bytes in all: ceil(log2 p) alpha + (p - 1)/p m beta.
"""
import argparse
import json
import math
import sys

VJP_OVER_FORWARD = 2.43  # flops of a field VJP per forward evaluation (mft-bench, -log_view)

# A typical InfiniBand cluster (HDR 200 Gb/s): latency and per-rank bandwidth
# inside a node (shared memory) and between nodes (the NIC shared by the
# node's ranks when all of them communicate at once).
# rate: the kernel's flop/s per rank; overhead: seconds per RK stage of a
# training step (forward and adjoint) that do not shrink with the work, as
# mft-bench measures on a tiny model (PETSc TS, kernel set-up, scalars).
CLUSTER = {"cores_per_node": 64, "alpha_intra": 0.5e-6, "beta_intra": 1 / 4e9,
           "alpha_inter": 2.0e-6, "nic_bandwidth": 25e9, "rate": 20e9, "overhead": 9e-6}


def allreduce_seconds(p, m, alpha, beta):
    """T(p, m) of one all-reduce of m bytes on p ranks; 0 on one rank."""
    if p <= 1:
        return 0.0
    rounds = math.ceil(math.log2(p))
    doubling = rounds * (alpha + m * beta)
    rabenseifner = 2 * rounds * alpha + 2 * (p - 1) / p * m * beta
    return min(doubling, rabenseifner)


def allgather_seconds(p, m, alpha, beta):
    """One all-gather of m bytes in total on p ranks (recursive doubling)."""
    if p <= 1:
        return 0.0
    return math.ceil(math.log2(p)) * alpha + (p - 1) / p * m * beta


def evaluation_flops(N, n, d, dh, M):
    """Flops of one field evaluation, as mft-bench and MODEL.md §3 count them."""
    return N * M * (4 * n * dh * d + 2 * n * n * dh + 2 * n * n * d + 2 * n * d * d)


def link(p, span_nodes, machine):
    """(alpha, beta) of an all-reduce among p ranks: inside one node, or
    across nodes where every rank of a node shares its NIC."""
    if not span_nodes:
        return machine["alpha_intra"], machine["beta_intra"]
    per_rank = machine["nic_bandwidth"] / machine["cores_per_node"]
    return machine["alpha_inter"], 1 / per_rank


def step_cost(size, P_h, P_s, machine):
    """Seconds of one training step on a P_h x P_s grid: {'compute', 'stage
    comm', 'gradient comm', 'total'}. A group's ranks are consecutive (mft's
    rank order), so a group of at most cores_per_node ranks stays in a node
    and the groups' all-reduce crosses nodes as soon as P_s > 1 does."""
    N, n, d, dh, M, L = (size[k] for k in ("N", "n", "d", "dh", "M", "L"))
    evals = L * size.get("k", 1) * size.get("stages", 4)
    P = P_h * P_s
    compute = (1 + VJP_OVER_FORWARD) * evals * evaluation_flops(N, n, d, dh, M) / (P * machine["rate"])
    compute += evals * machine["overhead"]
    cores = machine["cores_per_node"]
    alpha, beta = link(P_h, P_h > cores, machine)
    state = 8 * math.ceil(N / P_s) * n * d
    stage = 2 * evals * allreduce_seconds(P_h, state, alpha, beta)
    alpha, beta = link(P_s, P > cores, machine)
    particles = 8 * L * math.ceil(M / P_h) * (2 * dh * d + d * d)
    predictions = 8 * N * size.get("d_out", 1)
    gradient = allreduce_seconds(P_s, particles, alpha, beta) + allgather_seconds(P_s, predictions, alpha, beta)
    return {"compute": compute, "stage comm": stage, "gradient comm": gradient,
            "total": compute + stage + gradient}


def best_grid(size, P, machine):
    """The grid (P_h, P_s) of P ranks with the least step time; P_h <= M
    (a rank needs heads) and P_s <= N (a group needs sequences)."""
    best = None
    for P_s in (q for q in range(1, P + 1) if P % q == 0):
        P_h = P // P_s
        if P_h > size["M"] or P_s > size["N"]:
            continue
        cost = step_cost(size, P_h, P_s, machine)
        if best is None or cost["total"] < best[2]["total"]:
            best = (P_h, P_s, cost)
    return best


def model_table(size, machine, ranks, out=sys.stdout):
    """Strong scaling of `size` and weak scaling (N grows with P) over `ranks`."""
    base = best_grid(size, ranks[0], machine)
    print(f"strong scaling: N={size['N']} n={size['n']} d={size['d']} d_h={size['dh']} M={size['M']} "
          f"L={size['L']}, RK stages {size.get('stages', 4)}", file=out)
    print(f"{'ranks':>6} {'grid':>9} {'step s':>10} {'compute':>9} {'stage comm':>11} {'grad comm':>10}"
          f" {'efficiency':>10}", file=out)
    rows = []
    for P in ranks:
        P_h, P_s, c = best_grid(size, P, machine)
        eff = base[2]["total"] * ranks[0] / (c["total"] * P)
        rows.append(("strong", P, P_h, P_s, c, eff))
        print(f"{P:>6} {P_h:>4}x{P_s:<4} {c['total']:>10.4g} {c['compute']:>9.3g} {c['stage comm']:>11.3g}"
              f" {c['gradient comm']:>10.3g} {eff:>10.3f}", file=out)
    print(f"weak scaling: N = {size['N']} x ranks / {ranks[0]}, the rest as above", file=out)
    first = None
    for P in ranks:
        weak = dict(size, N=size["N"] * P // ranks[0])
        P_h, P_s, c = best_grid(weak, P, machine)
        first = first or c["total"]
        eff = first / c["total"]
        rows.append(("weak", P, P_h, P_s, c, eff))
        print(f"{P:>6} {P_h:>4}x{P_s:<4} {c['total']:>10.4g} {c['compute']:>9.3g} {c['stage comm']:>11.3g}"
              f" {c['gradient comm']:>10.3g} {eff:>10.3f}", file=out)
    return rows


def collect(paths):
    """Rows (series, ranks, groups, N, step seconds, forward seconds,
    efficiency) of mft-bench --json outputs named SERIES-RANKS.json or
    holding 'series' in their benchmark title; efficiency against the
    series' fewest ranks (strong: t1 P1 / (tP P); weak: t1 / tP)."""
    runs = []
    for path in paths:
        with open(path) as f:
            text = f.read().strip()
        try:
            b = json.loads(text.splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            raise SystemExit(f"error: {path}: not the JSON line of mft-bench --json")
        series = "weak" if "weak" in path.rsplit("/", 1)[-1] else "strong"
        title = b["benchmark"]
        N = int(title.split("N=")[1].split()[0])
        groups = int(title.split(" x ")[1].split()[0]) if " x " in title else 1
        runs.append({"series": series, "ranks": int(b["ranks"]), "groups": groups, "N": N,
                     "step_s": b["phases"]["training_step"]["seconds"],
                     "forward_s": b["phases"]["forward_solve"]["seconds"]})
    out = []
    for series in ("strong", "weak"):
        rows = sorted((r for r in runs if r["series"] == series), key=lambda r: r["ranks"])
        if not rows:
            continue
        t1, p1 = rows[0]["step_s"], rows[0]["ranks"]
        for r in rows:
            r["efficiency"] = t1 * p1 / (r["step_s"] * r["ranks"]) if series == "strong" else t1 / r["step_s"]
            out.append(r)
    return out


def main(argv=None):
    from .h5checks import OutputError
    try:
        _main(argv)
    except OutputError as e:  # an output that may not be written: one line
        sys.exit(f"error: {e}")


def _main(argv):
    parser = argparse.ArgumentParser(prog="python3 -m mft.scaling", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("model", help="the alpha-beta prediction")
    for key, value in (("N", 8192), ("n", 32), ("d", 16), ("dh", 16), ("M", 512), ("L", 32), ("k", 1),
                       ("stages", 4)):
        m.add_argument(f"--{key}", type=int, default=value)
    m.add_argument("--ranks", default="64,128,256,512,1024,2048,4096")
    for key, value in CLUSTER.items():
        m.add_argument(f"--{key.replace('_', '-')}", type=float, default=value, dest=key)
    c = sub.add_parser("collect", help="measured series of scaling.sbatch")
    c.add_argument("json", nargs="+")
    c.add_argument("--csv")
    c.add_argument("--plot")
    args = parser.parse_args(argv)
    if args.command == "model":
        size = {k: getattr(args, k) for k in ("N", "n", "d", "dh", "M", "L", "k", "stages")}
        machine = {k: getattr(args, k) for k in CLUSTER}
        machine["cores_per_node"] = int(machine["cores_per_node"])
        model_table(size, machine, [int(p) for p in args.ranks.split(",")])
        return
    from . import h5checks
    if args.csv:
        h5checks.check_output(args.csv, args.json, "--csv")
    if args.plot:
        h5checks.check_output(args.plot, args.json + [args.csv] if args.csv else args.json, "--plot", figure=True)
    rows = collect(args.json)
    print(f"{'series':>7} {'ranks':>6} {'groups':>7} {'N':>7} {'step s':>10} {'forward s':>10} {'efficiency':>10}")
    for r in rows:
        print(f"{r['series']:>7} {r['ranks']:>6} {r['groups']:>7} {r['N']:>7} {r['step_s']:>10.4g}"
              f" {r['forward_s']:>10.4g} {r['efficiency']:>10.3f}")
    if args.csv:
        import pandas as pd
        pd.DataFrame(rows).to_csv(args.csv, index=False, lineterminator="\n")
        print(f"wrote {args.csv}")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for series, marker in (("strong", "o-"), ("weak", "s--")):
            pts = [(r["ranks"], r["efficiency"]) for r in rows if r["series"] == series]
            if pts:
                ax.plot(*zip(*pts), marker, label=series)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("ranks")
        ax.set_ylabel("parallel efficiency")
        ax.axhline(1.0, color="grey", lw=0.5)
        ax.legend()
        fig.tight_layout()
        h5checks.save_figure(fig, args.plot, "--plot", dpi=110)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Weight decay at stationarity ([A] Thm 4.1), on [A]'s attention + MLP
model: with weight decay lambda the flow's stationary point has risk
R* = O(lambda); the stationary objective Q* converges as M grows.

Teacher task (a 4-head teacher, N = 32 sequences of n = 16 tokens), the
student with M heads and M MLP neuron particles (width 4) per slice, L = 2,
M in {4, 16, 64}; lambda in {0, 3e-3, 1e-2, 3e-2, 1e-1}, three seeds. The
gradient flow (Euler, dtau = 0.2) runs to tau = 10/lambda (lambda = 0: as
long as the smallest lambda > 0), and a run counts as stationary when Q
changed by less than 0.1 % over its last tenth (printed per run).

Criteria, stated before the runs:
  1. R* <= C lambda: the ratio R*/lambda does not grow as lambda falls (its
     value at the smallest lambda is at most its largest value at the others
     plus two standard errors), at the widest M; C is reported;
  2. Q* converges in M: at every lambda > 0, |Q*(64) - Q*(16)| is below the
     seed spread (standard deviation) of Q*(64);
  3. every run with lambda > 0 is stationary by the rule above.

  python3 scripts/experiments/weight_decay.py [--quick] [--update-docs] [--jobs J] [--slurm | --from-sweep JOB]

Writes weight_decay.csv (M, lambda, seeds, R*, Q* and their standard errors,
|theta|^2, how many runs were stationary), weight_decay-criteria.txt and
exp_weight_decay.png.
"""
import math

import numpy as np

import common
from common import Run

FULL = dict(lambdas=[0.0, 3e-3, 1e-2, 3e-2, 1e-1], widths=[4, 16, 64], seeds=[1, 2, 3], L=2, N=32, teacher=4,
            mlp_width=4, dtau=0.2, every=50)
QUICK = dict(lambdas=[0.0, 1.0, 3.0], widths=[2, 4], seeds=[1, 2], L=2, N=8, teacher=2, mlp_width=2, dtau=0.2,
             every=2)
STATIONARY = 1e-3  # criterion 3: relative change of Q over the last tenth


def steps_of(lam, size):
    """Steps to tau = 10/lambda (lambda = 0: those of the smallest lambda > 0)."""
    smallest = min(x for x in size["lambdas"] if x > 0)
    return int(math.ceil(10 / ((lam or smallest) * size["dtau"]) / size["every"])) * size["every"]


def run_name(M, lam, seed):
    return f"M{M}-lambda{lam:g}-s{seed}"


def stationary_change(h):
    """|Q(end) - Q(90 % of the run)| / Q(end)."""
    q, step = h["objective"], h["step"]
    earlier = q[np.searchsorted(step, 0.9 * step[-1])]
    if q[-1] == 0:  # a lambda = 0 run whose risk underflowed to 0
        return 0.0 if earlier == 0 else np.inf
    return abs(q[-1] - earlier) / abs(q[-1])


def main():
    options = common.parser(__doc__).parse_args()
    size = QUICK if options.quick else FULL
    runs = [Run(run_name(M, lam, seed), {
        "data.task": "teacher", "data.teacher_heads": size["teacher"], "data.sequences": size["N"],
        "model.heads": M, "model.mlp_particles": M, "model.mlp_width": size["mlp_width"], "model.slices": size["L"],
        "init.seed": seed, "train.lambda": lam, "train.steps": steps_of(lam, size), "train.dtau": size["dtau"],
        "output.history_every": size["every"], "output.snapshot_every": steps_of(lam, size)})
        for M in size["widths"] for lam in size["lambdas"] for seed in size["seeds"]]
    if not options.from_sweep and not options.slurm:
        print(f"[weight_decay] {len(runs)} runs, {sum(r.args['train.steps'] for r in runs)} steps in all; the full "
              "mode took 1 h 42 min on 2 cores shared with other work (the M = 64 runs most of it)", flush=True)
    paths = common.execute("weight_decay", runs, options)

    rows = []
    for M in size["widths"]:
        for lam in size["lambdas"]:
            found, diverged = common.seed_histories(paths, [run_name(M, lam, s) for s in size["seeds"]])
            R = [h["risk"][-1] for h in found]
            Q = [h["objective"][-1] for h in found]
            changes = [stationary_change(h) for h in found]
            r, r_err = common.mean_and_error(R or [np.nan])
            q, q_err = common.mean_and_error(Q or [np.nan])
            rows.append({"M": M, "lambda": lam, "tau": steps_of(lam, size) * size["dtau"], "seeds": len(size["seeds"]),
                         "diverged": diverged, "risk": r, "risk_err": r_err, "objective": q, "objective_err": q_err,
                         "objective_sd": float(np.std(Q, ddof=1)) if len(Q) > 1 else np.nan,
                         "norm2": (q - r) * 2 / lam if lam > 0 else np.nan,
                         "stationary": sum(c < STATIONARY for c in changes), "max_change": max(changes, default=np.nan)})
    columns = ["M", "lambda", "tau", "seeds", "diverged", "risk", "risk_err", "objective", "objective_err",
               "objective_sd", "norm2", "stationary", "max_change"]
    common.write_csv("weight_decay", options, columns, rows)
    for r in rows:
        print(f"M={r['M']:<3} lambda {r['lambda']:<6g} tau {r['tau']:<7g} R* = {r['risk']:.3e} +- {r['risk_err']:.1e}, "
              f"Q* = {r['objective']:.4e} +- {r['objective_err']:.1e}, |theta|^2 = {r['norm2']:.3e}, stationary "
              f"{r['stationary']} of {r['seeds'] - r['diverged']} (largest change {r['max_change']:.1e})")

    widest = [r for r in rows if r["M"] == size["widths"][-1] and r["lambda"] > 0]
    ratio = [(r["risk"] / r["lambda"], r["risk_err"] / r["lambda"]) for r in widest]
    C = max(x for x, _ in ratio)
    lines = [common.criterion(
        f"R* <= C lambda at M = {size['widths'][-1]}: R*/lambda at the smallest lambda within 2 SE of its largest",
        ratio[0][0] <= max(x for x, _ in ratio[1:]) + 2 * ratio[0][1],
        "R*/lambda = " + ", ".join(f"{x:.3g} (lambda {r['lambda']:g})" for (x, _), r in zip(ratio, widest)) +
        f"; C = {C:.3g}")]
    pairs = []
    for lam in size["lambdas"][1:]:
        a = next(r for r in rows if r["M"] == size["widths"][-2] and r["lambda"] == lam)
        b = next(r for r in rows if r["M"] == size["widths"][-1] and r["lambda"] == lam)
        pairs.append((lam, abs(b["objective"] - a["objective"]), b["objective_sd"]))
    lines.append(common.criterion(
        f"Q* converges in M: |Q*({size['widths'][-1]}) - Q*({size['widths'][-2]})| below the seed spread of "
        f"Q*({size['widths'][-1]}) at every lambda > 0", all(d < sd for _, d, sd in pairs),
        ", ".join(f"lambda {lam:g}: {d:.2e} vs {sd:.2e}" for lam, d, sd in pairs)))
    decayed = [r for r in rows if r["lambda"] > 0]
    total = sum(r["seeds"] - r["diverged"] for r in decayed)
    still = sum(r["stationary"] for r in decayed)
    lines.append(common.criterion(
        f"every run with lambda > 0 is stationary (Q changes < {STATIONARY:.0e} over its last tenth)", still == total,
        f"{still} of {total} runs; largest change {max(r['max_change'] for r in decayed):.1e}"))
    common.write_criteria("weight_decay", options, lines)

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    for i, M in enumerate(size["widths"]):
        sel = [r for r in rows if r["M"] == M and r["lambda"] > 0]
        lam = np.array([r["lambda"] for r in sel])
        axes[0].errorbar(lam, [r["risk"] for r in sel], yerr=[r["risk_err"] for r in sel], marker="o", capsize=3,
                         color=f"C{i}", label=f"R*, M = {M}")
        axes[1].errorbar(lam, [r["objective"] for r in sel], yerr=[r["objective_err"] for r in sel], marker="s",
                         capsize=3, color=f"C{i}", label=f"Q*, M = {M}")
    lam = np.array([r["lambda"] for r in widest])
    axes[0].plot(lam, C * lam, "k--", lw=0.8, label=f"C lambda, C = {C:.2g}")
    # A guide of slope 2 through the widest model's smallest lambda (no fit).
    axes[0].plot(lam, widest[0]["risk"] * (lam / lam[0]) ** 2, "k:", lw=0.8, label="slope 2 (guide)")
    zero = max(r["risk"] for r in rows if r["lambda"] == 0)
    axes[0].set_title(f"lambda = 0 controls: R* <= {zero:.0e} (not drawn)", fontsize=8)
    axes[0].set_ylabel("stationary risk R*")
    axes[1].set_ylabel("Q* = R* + (lambda/2)|theta|^2")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("weight decay lambda (run to tau = 10/lambda)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6)
    common.save_figure(fig, "weight_decay", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

#!/usr/bin/env python3
"""Linear convergence and the NTK ([B]). Linearised in tau, the residual
obeys d(yhat - y)/dtau = -(1/N) K (yhat - y) with K = (M L) J J^T, so while K
stays near its initial value the risk R = (1/(2N)) |yhat - y|^2 decays at a
rate between 2 lambda_min(K)/N and 2 lambda_max(K)/N. This driver measures
the rate of R over the first step and the early rate (a fit of log R
against tau until R has fallen by 100x)
against those bounds, with K at initialisation of every parameter (`all`,
the kernel of the flow) and of V alone, and follows lambda_min, lambda_max
of K_V along training (`ntk.every`). Cases: the teacher task, a family whose
log-sum-exp test passes (cubes of different radii) and one where it fails
(Gaussian translates: one covariance, shifted means).

  python3 scripts/experiments/ntk_rate.py [--quick] [--update-docs] [--jobs J]

Runs locally only (it needs `mft ntk` runs). Writes ntk_rate.csv (case,
seed, N, lambda_min and lambda_max of K_all and K_V at initialisation, the
bounds, the first step's rate and whether it lies within the K_all bounds,
the fitted early rate with its standard error and whether it does, the
drift of lambda_min(K_V) over training, lambda_min(K_all) at the last
snapshot, the final R)
and exp_ntk_rate.png.
"""
import numpy as np

import common
import fits
from common import Run

CASES = {
    "teacher": {"data.task": "teacher", "data.teacher_heads": 4, "data.sequences": 16},
    "cubes": {"data.task": "families", "families.kind": "cube", "families.values": "0.5:2", "model.d": 2,
              "model.head_dim": 2, "data.sequences": 4, "data.tokens": 64},
    "translates": {"data.task": "families", "families.kind": "gaussian-cov", "families.values": "0:1",
                   "families.variances": "1:1", "model.d": 2, "model.head_dim": 2, "data.sequences": 4,
                   "data.tokens": 64},
}
FULL = dict(seeds=[1, 2, 3], M=64, L=4, steps=200, dtau=0.05, every=20)
QUICK = dict(seeds=[1], M=8, L=2, steps=12, dtau=0.02, every=4)


def main():
    options = common.parser(__doc__).parse_args()
    if options.slurm or options.from_sweep:
        raise SystemExit("error: ntk_rate runs `mft ntk`, which the sweep array does not: run it locally")
    size = QUICK if options.quick else FULL
    import h5py

    def base(case, seed):
        return {**CASES[case], "model.heads": size["M"], "model.slices": size["L"], "init.seed": seed}

    # First the kernels at initialisation; then training, with an Euler step
    # well inside the linearised flow's stability limit (dtau lambda_max / N < 2):
    # dtau = min(dtau, N / (4 lambda_max(K_all))), two significant digits.
    runs = [Run(f"{case}-s{seed}-ntk{part}", {**base(case, seed), "ntk.part": part}, command="ntk")
            for case in CASES for seed in size["seeds"] for part in ("all", "V")]
    paths = common.execute("ntk_rate", runs, options)
    train = []
    for case, args in CASES.items():
        for seed in size["seeds"]:
            with h5py.File(paths[f"{case}-s{seed}-ntkall"], "r") as f:
                top = float(f["ntk"].attrs["lambda_max"])
            dtau = float(f"{min(size['dtau'], args['data.sequences'] / (4 * top)):.2g}")
            train.append(Run(f"{case}-s{seed}-train", {**base(case, seed), "train.steps": size["steps"],
                                                       "train.dtau": dtau, "ntk.every": size["every"],
                                                       "output.snapshot_every": size["steps"]}))
    paths.update(common.execute("ntk_rate", train, options))
    # K_all again at the last snapshot: how far the kernel of the flow moved.
    end = [Run(f"{r.name}-ntkall-end", {"from": paths[r.name], "snapshot": -1, "ntk.part": "all"}, command="ntk")
           for r in train if r.name in paths]
    paths.update(common.execute("ntk_rate", end, options))

    rows, curves = [], {}
    for case, args in CASES.items():
        for seed in size["seeds"]:
            lam = {}
            for part in ("all", "V"):
                with h5py.File(paths[f"{case}-s{seed}-ntk{part}"], "r") as f:
                    lam[part] = (float(f["ntk"].attrs["lambda_min"]), float(f["ntk"].attrs["lambda_max"]))
            N = args["data.sequences"]
            row = {"case": case, "seed": seed, "N": N,
                   "all_min": lam["all"][0], "all_max": lam["all"][1], "V_min": lam["V"][0], "V_max": lam["V"][1],
                   "bound_low": 2 * lam["all"][0] / N, "bound_high": 2 * lam["all"][1] / N}
            name = f"{case}-s{seed}-train"
            if name not in paths:
                row.update(first_rate=np.nan, first_within=0, rate=np.nan, rate_err=np.nan, within=0, drift=np.nan,
                           all_min_end=np.nan, final_risk=np.nan)
                rows.append(row)
                continue
            h, _ = common.history(paths[name])
            window = fits.early_window(h["tau"], h["risk"])
            fit = fits.exponential_rate(h["tau"][window], h["risk"][window])
            vmin = h.get("ntk_lambda_min")
            first = (h["risk"][0] - h["risk"][1]) / ((h["tau"][1] - h["tau"][0]) * h["risk"][0])
            with h5py.File(paths[f"{name}-ntkall-end"], "r") as f:
                end_min = float(f["ntk"].attrs["lambda_min"])
            rows.append({**row, "first_rate": first,
                         "first_within": int(row["bound_low"] <= first <= row["bound_high"]),
                         "rate": fit.value, "rate_err": fit.error,
                         "within": int(row["bound_low"] <= fit.value <= row["bound_high"]),
                         "drift": float(vmin[-1] / vmin[0]) if vmin is not None else np.nan,
                         "all_min_end": end_min,
                         "final_risk": float(h["risk"][-1])})
            curves[(case, seed)] = h
    columns = ["case", "seed", "N", "all_min", "all_max", "V_min", "V_max", "bound_low", "bound_high",
               "first_rate", "first_within", "rate", "rate_err", "within", "drift", "all_min_end", "final_risk"]
    common.write_csv("ntk_rate", options, columns, rows)

    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for i, case in enumerate(CASES):
        seed = size["seeds"][0]
        if (case, seed) not in curves:
            continue
        h = curves[(case, seed)]
        row = next(r for r in rows if r["case"] == case and r["seed"] == seed)
        line, = axes[0].semilogy(h["tau"], h["risk"], label=f"{case}: rate {row['rate']:.2f}")
        r0 = h["risk"][0]
        for bound, style in (("bound_low", ":"), ("bound_high", "--")):
            axes[0].semilogy(h["tau"], r0 * np.exp(-row[bound] * h["tau"]), style, color=line.get_color(), lw=0.8)
        if "ntk_lambda_min" in h:
            ok = np.isfinite(h["ntk_lambda_min"])
            axes[1].semilogy(h["tau"][ok], h["ntk_lambda_min"][ok] / h["ntk_lambda_min"][ok][0], "o-",
                             color=line.get_color(), label=f"{case} λ_min(K_V)")
    axes[0].set_ylim(bottom=max(1e-16, axes[0].get_ylim()[0]))
    axes[0].set_xlabel("τ")
    axes[0].set_ylabel("risk R  (⋯ 2λ_min/N, - - 2λ_max/N)")
    axes[1].set_xlabel("τ")
    axes[1].set_ylabel("λ_min(K_V)(τ) / λ_min(K_V)(0)")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    common.save_figure(fig, "ntk_rate", options)
    for r in rows:
        print(f"{r['case']:10} seed {r['seed']}: K_all [{r['all_min']:.3e}, {r['all_max']:.3e}], K_V "
              f"[{r['V_min']:.3e}, {r['V_max']:.3e}]; first-step rate {r['first_rate']:.4f}, early rate "
              f"{r['rate']:.4f} +- {r['rate_err']:.1e} in "
              f"[{r['bound_low']:.4f}, {r['bound_high']:.4f}]: {'yes' if r['within'] else 'no'}; "
              f"lambda_min(K_V) drift x{r['drift']:.3f}, lambda_min(K_all) {r['all_min']:.3e} -> "
              f"{r['all_min_end']:.3e}; final R {r['final_risk']:.3e}")


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

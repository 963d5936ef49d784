#!/usr/bin/env python3
"""Mean-field Langevin at stationarity: the stationary risk R* against the
temperature T. Each particle follows d theta = -(M L) dR/d theta dtau +
sqrt(2 T) dW, so the particles' stationary law is proportional to
exp(-M L R(theta) / T). Near a minimum where the model fits the data
(R = 0), R is quadratic in the N d_out directions the predictions span
(Gauss-Newton: the Hessian (1/N) J^T J, of the rank of the NTK) and flat in
the others, and equipartition gives

    E[R] = T N d_out / (2 M L),

linear in T with a prefactor that counts the data, not the parameters. The
flow's own end (T = 0) is the baseline: R_flow must lie far below.

Setting: the teacher task (N = 16, d_out = 1, 4 teacher heads), M = 64,
L = 4, three seeds; Euler-Maruyama with dtau = min(0.02, N / (4
lambda_max(K_all(0)))) (the discrete chain's stationary spread exceeds the
continuous one by at most 1/(1 - dtau lambda_max / (2N)), under 15 % here),
for tau = 20; T in {1e-5, 3e-5, .., 1e-3} (two decades) and T = 0. R* is the
mean of R over the last half of the run, its error from 10 batch means.

Criteria, stated before the runs:
  1. every run with T > 0 is stationary: R's means over the third and the
     last quarter differ by less than three of their combined batch-mean
     errors;
  2. R* is linear in T: the power of R* against T (a least-squares line
     through every seed's point, interval +- 2 standard errors) contains 1;
  3. equipartition: R* / (T N / (2 M L)) lies in [0.5, 2] at every T (seed
     mean);
  4. the baseline is far below: the flow's R at the end is below a tenth of
     the prediction at the smallest T.

  python3 scripts/experiments/langevin.py [--quick] [--update-docs] [--jobs J]

Runs locally only (an `mft ntk` run sets the step). About 15 minutes on 2
cores. Writes langevin.csv (T, seeds, R* with its standard error over
seeds, the equipartition prediction and the ratio, the largest
stationarity statistic) and exp_langevin.png; prints the Euler-Maruyama
excess expected from the kernel's spectrum.
"""
import numpy as np

import common
import fits
from common import Run

FULL = dict(seeds=[1, 2, 3], M=64, L=4, N=16, tau=20.0, dtau=0.02,
            temperatures=[1e-5, 3e-5, 1e-4, 3e-4, 1e-3])
QUICK = dict(seeds=[1, 2], M=8, L=2, N=8, tau=1.0, dtau=0.02, temperatures=[1e-4, 1e-3])
BATCHES = 10
COLUMNS = ["T", "seeds", "diverged", "risk", "risk_err", "predicted", "ratio", "stationarity"]


def stationary_mean(risk):
    """(mean of the last half, its batch-means error, the stationarity
    statistic |mean(Q3) - mean(Q4)| / combined error)."""
    risk = np.asarray(risk, float)
    half = risk[len(risk) // 2:]

    def batch_mean(x):
        b = np.array_split(x, BATCHES)
        means = np.array([c.mean() for c in b])
        return float(x.mean()), float(means.std(ddof=1) / np.sqrt(len(means)))

    mean, err = batch_mean(half)
    q3, q4 = half[:len(half) // 2], half[len(half) // 2:]
    (m3, e3), (m4, e4) = batch_mean(q3), batch_mean(q4)
    return mean, err, abs(m3 - m4) / max(np.hypot(e3, e4), 1e-300)


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "langevin")
    size = QUICK if options.quick else FULL
    import h5py

    def base(seed):
        return {"data.task": "teacher", "data.teacher_heads": 4, "data.sequences": size["N"],
                "model.heads": size["M"], "model.slices": size["L"], "init.seed": seed}

    kernels = [Run(f"s{seed}-ntk", {**base(seed), "ntk.part": "all"}, command="ntk") for seed in size["seeds"]]
    paths = common.execute("langevin", kernels, options)
    top = 0.0
    for run in kernels:
        with h5py.File(paths[run.name], "r") as f:
            top = max(top, float(f["ntk"].attrs["lambda_max"]))
    dtau = float(f"{min(size['dtau'], size['N'] / (4 * top)):.2g}")
    steps = int(round(size["tau"] / dtau))
    print(f"[langevin] dtau = {dtau:g} (largest lambda_max(K_all(0)) {top:.4g}), {steps} steps")
    temperatures = [0.0] + size["temperatures"]
    train = [Run(f"T{T:g}-s{seed}", {**base(seed), "train.temperature": T, "train.steps": steps, "train.dtau": dtau,
                                     "output.snapshot_every": steps}) for T in temperatures for seed in size["seeds"]]
    paths.update(common.execute("langevin", train, options))

    ML = size["M"] * size["L"]
    rows, curves = [], {}
    for T in temperatures:
        found, stats = [], []
        for seed in size["seeds"]:
            if f"T{T:g}-s{seed}" not in paths:
                continue
            h, _ = common.history(paths[f"T{T:g}-s{seed}"])
            stats.append(stationary_mean(h["risk"]))
            found.append(stats[-1][0])
            if seed == size["seeds"][0]:
                curves[T] = h
        r, r_err = common.mean_and_error(found) if found else (np.nan, np.nan)
        predicted = T * size["N"] / (2 * ML)
        rows.append({"T": T, "seeds": len(size["seeds"]), "diverged": len(size["seeds"]) - len(found), "risk": r,
                     "risk_err": r_err, "predicted": predicted, "ratio": r / predicted if T > 0 else np.nan,
                     "stationarity": max((s[2] for s in stats), default=np.nan), "points": found})
    common.write_csv("langevin", options, COLUMNS, rows)
    hot = [r for r in rows if r["T"] > 0]
    pts = [(r["T"], v) for r in hot for v in r["points"] if v > 0]
    fit = fits.power_law([p[0] for p in pts], [p[1] for p in pts]) if len(pts) > 2 else None
    plot(rows, curves, fit, options)

    flow = rows[0]
    lines = [
        common.criterion("every run with T > 0 is stationary (third and last quarter agree within 3 errors)",
                         all(r["stationarity"] < 3 for r in hot),
                         "largest statistic " + ", ".join(f"{r['stationarity']:.2f} (T = {r['T']:g})" for r in hot)),
        common.criterion("R* is linear in T (the power's interval contains 1)",
                         fit is not None and fit.value - 2 * fit.error <= 1 <= fit.value + 2 * fit.error,
                         (f"power {fit.value:.3f} +- {fit.error:.3f}; " if fit else "no fit; ")
                         + f"flow (T = 0) R {flow['risk']:.2e}"),
        common.criterion("equipartition: R* / (T N / (2 M L)) in [0.5, 2] at every T",
                         all(0.5 <= r["ratio"] <= 2 for r in hot),
                         ", ".join(f"{r['ratio']:.3f} (T = {r['T']:g})" for r in hot)),
    ]
    floor = 0.1 * hot[0]["predicted"]
    lines.append(common.criterion("the flow (T = 0) ends below a tenth of the smallest T's prediction",
                                  flow["risk"] < floor, f"R_flow {flow['risk']:.2e} against {floor:.2e}"))
    common.write_criteria("langevin", options, lines)
    # Euler-Maruyama's stationary spread along a mode of K/N-eigenvalue k is
    # the flow's times 1/(1 - dtau k / 2): the excess equipartition expects.
    factors = []
    for run in kernels:
        with h5py.File(paths[run.name], "r") as f:
            k = dtau * f["ntk/eigenvalues"][()] / size["N"]
        factors.append(float(np.mean(1 / (1 - k / 2))))
    print("measured: the Euler-Maruyama factor, mean of 1/(1 - dtau lambda_i/(2N)) over K_all(0)'s eigenvalues: "
          + ", ".join(f"{x:.4f}" for x in factors) + " (seeds " + ", ".join(map(str, size["seeds"])) + ")")


def plot(rows, curves, fit, options):
    plt = common.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    for i, (T, h) in enumerate(sorted(curves.items())):
        axes[0].semilogy(h["tau"], h["risk"], lw=0.8, color=f"C{i}", label=f"T = {T:g}")
    axes[0].set_xlabel("τ")
    axes[0].set_ylabel("risk R (seed 1)")
    hot = [r for r in rows if r["T"] > 0]
    T = np.array([r["T"] for r in hot])
    axes[1].errorbar(T, [r["risk"] for r in hot], yerr=[r["risk_err"] for r in hot], marker="o", ms=3, capsize=2,
                     label="R* (mean ± SE over seeds)" + (f": T^{fit.value:.2f}±{fit.error:.2f}" if fit else ""))
    axes[1].plot(T, [r["predicted"] for r in hot], "k:", label="T N / (2 M L)")
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("temperature T")
    axes[1].set_ylabel("stationary risk R*")
    common.finish_axes(axes)
    common.save_figure(fig, "langevin", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

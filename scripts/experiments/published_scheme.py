#!/usr/bin/env python3
"""mft's forward solve against the scheme of the clustering literature,
written here anew from its description: the same initial tokens and weights
through `mft forward` and through RK4 in the rescaled variables
z = e^(-V t) x in which Geshkovski, Letrouit, Polyanskiy and Rigollet
integrate the self-attention dynamics in R^d. With Q = K = sqrt(beta) I and
V = I, dx_i/dt = sum_j softmax_j(beta <x_i, x_j>) x_j becomes

    dz_i/dt = sum_j softmax_j(beta e^(2t) <z_i, z_j>) (z_j - z_i),   x = e^t z,

(the softmax's rows sum to one). mft runs the same flow as its depth
problem with one head per slice, V = T I over s in [0, 1] (t = T s), in the
unscaled x, with its own RK4 (PETSc's TSRK 4) and the tokens in R^d
(model.norm none): two different discretisations of one ODE.

Setting: d = 2, n = 16 tokens N(0, I), N = 4 sequences, beta = 1, T = 1.5,
L = 4 slices; k = 1 .. 32 steps per slice in mft, the same L k steps of
dt = T / (L k) in the rescaled scheme, and the rescaled scheme at 1024 steps
per slice as the reference.

Criteria, stated before the runs:
  1. the two schemes' final tokens agree to their discretisation error: the
     difference max |x_mft - x_rescaled| / max |x| falls at fourth order
     (the fitted order over k = 2 .. 16 within 4 +- 0.5);
  2. mft's error against the reference falls at fourth order (4 +- 0.5);
  3. at the finest step (k = 32) the two agree to 1e-9 relative.

  python3 scripts/experiments/published_scheme.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft forward` runs). About a minute on 2 cores. Writes
published_scheme.csv (one row per k: the difference, each scheme's error
against the reference) and exp_published_scheme.png.
"""
from pathlib import Path

import numpy as np

import common
from common import Run

FULL = dict(d=2, n=16, N=4, beta=1.0, T=1.5, L=4, ks=[1, 2, 4, 8, 16, 32], fit=[2, 4, 8, 16], reference=1024)
QUICK = dict(d=2, n=8, N=2, beta=1.0, T=1.0, L=2, ks=[1, 2, 4], fit=[1, 2, 4], reference=64)
COLUMNS = ["k", "dt", "difference", "mft_error", "rescaled_error"]


def rescaled_rk4(X0, beta, T, steps):
    """x(T) = e^T z(T) of the rescaled dynamics by classical RK4 with `steps`
    fixed steps (X0: (N, n, d), z(0) = x(0))."""
    def velocity(t, Z):
        s = beta * np.exp(2 * t) * np.einsum("iad,ibd->iab", Z, Z)
        s -= s.max(axis=-1, keepdims=True)
        P = np.exp(s)
        P /= P.sum(axis=-1, keepdims=True)
        return np.einsum("iab,ibd->iad", P, Z) - Z

    h, Z = T / steps, np.array(X0, dtype=float)
    for step in range(steps):
        t = step * h
        k1 = velocity(t, Z)
        k2 = velocity(t + h / 2, Z + h / 2 * k1)
        k3 = velocity(t + h / 2, Z + h / 2 * k2)
        k4 = velocity(t + h, Z + h * k3)
        Z = Z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return np.exp(T) * Z


def order(ks, errors, chosen):
    """The fitted order p of errors ~ C k^-p over the k in `chosen`, with its
    standard error."""
    pick = [i for i, k in enumerate(ks) if k in chosen]
    x, y = np.log(np.array(ks, float)[pick]), np.log(np.array(errors)[pick])
    A = np.stack([x, np.ones_like(x)], axis=1)
    coef, res, _, _ = np.linalg.lstsq(A, y, rcond=None)
    dof = max(len(x) - 2, 1)
    sigma2 = float(res[0]) / dof if res.size else 0.0
    cov = sigma2 * np.linalg.inv(A.T @ A)
    return -coef[0], float(np.sqrt(cov[0, 0]))


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "published_scheme", "`mft forward`")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("published_scheme" + ("-quick" if options.quick else ""))
    d, L, T, beta = size["d"], size["L"], size["T"], size["beta"]
    X0 = np.random.default_rng(7).standard_normal((size["N"], size["n"], d))
    data = common.data_file(folder, "tokens", X0, np.zeros((size["N"], 1)))
    eye = np.broadcast_to(np.eye(d), (L, 1, d, d))
    weights = common.particle_file(folder, "given", {"Q": np.sqrt(beta) * eye, "K": np.sqrt(beta) * eye,
                                                     "V": T * eye})
    runs = [Run(f"mft-k{k}", {"init.file": str(weights), "data.task": "file", "data.file": str(data),
                              "model.heads": 1, "model.slices": L, "model.head_dim": d, "depth.steps_per_slice": k},
                command="forward") for k in size["ks"]]
    paths = common.execute("published_scheme", runs, options)

    import h5py
    reference = rescaled_rk4(X0, beta, T, L * size["reference"])
    scale = np.abs(reference).max()
    rows = []
    for k in size["ks"]:
        with h5py.File(paths[f"mft-k{k}"], "r") as f:
            x_mft = f["forward/tokens_final"][()]
        x_pub = rescaled_rk4(X0, beta, T, L * k)
        rows.append({"k": k, "dt": T / (L * k), "difference": np.abs(x_mft - x_pub).max() / scale,
                     "mft_error": np.abs(x_mft - reference).max() / scale,
                     "rescaled_error": np.abs(x_pub - reference).max() / scale})
    common.write_csv("published_scheme", options, COLUMNS, rows)
    plot(rows, size, options)

    ks = [r["k"] for r in rows]
    p_diff = order(ks, [r["difference"] for r in rows], size["fit"])
    p_mft = order(ks, [r["mft_error"] for r in rows], size["fit"])
    finest = rows[-1]
    lines = [
        common.criterion("the two schemes' difference falls at fourth order (fitted order within 4 +- 0.5)",
                         abs(p_diff[0] - 4) <= 0.5,
                         f"order {p_diff[0]:.2f} +- {p_diff[1]:.2f} over k = {size['fit']}; differences "
                         + ", ".join(f"{r['difference']:.2e}" for r in rows)),
        common.criterion("mft's error against the reference falls at fourth order (within 4 +- 0.5)",
                         abs(p_mft[0] - 4) <= 0.5,
                         f"order {p_mft[0]:.2f} +- {p_mft[1]:.2f}; errors " + ", ".join(f"{r['mft_error']:.2e}"
                                                                                      for r in rows)),
        common.criterion(f"at k = {finest['k']} the two agree to 1e-9 relative", finest["difference"] < 1e-9,
                         f"{finest['difference']:.2e}"),
    ]
    common.write_criteria("published_scheme", options, lines)


def plot(rows, size, options):
    plt = common.pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.2))
    dt = np.array([r["dt"] for r in rows])
    for key, label, style in (("difference", "|x_mft − x_rescaled|", "o-"),
                              ("mft_error", "mft against the reference", "s--"),
                              ("rescaled_error", "rescaled RK4 against the reference", "^:")):
        ax.loglog(dt, [r[key] for r in rows], style, ms=4, label=label)
    guide = rows[len(rows) // 2]["difference"] * (dt / dt[len(rows) // 2]) ** 4
    ax.loglog(dt, guide, color="0.6", lw=0.8, label="slope 4")
    ax.set_xlabel("step dt = T / (L k)")
    ax.set_ylabel("max |Δx| / max |x(T)|")
    ax.set_title(f"d = {size['d']}, n = {size['n']}, β = {size['beta']:g}, T = {size['T']:g}")
    common.finish_axes([ax])
    common.save_figure(fig, "published_scheme", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

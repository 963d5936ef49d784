#!/usr/bin/env python3
"""mft's forward solve against the step of the clustering literature's
published code, and against classical RK4 in that literature's variables.

The self-attention dynamics of one head with fixed Q = K = A, V in R^d,
dx_i/dt = sum_j softmax_j(<A x_i, A x_j>) V x_j, are integrated in that
literature (Geshkovski, Letrouit, Polyanskiy, Rigollet) in the rescaled
variables z = e^(-V t) x:

    dz_i/dt = sum_j P_ij(t, z) V (z_j - z_i),
    P_ij = softmax_j(<A e^(Vt) z_i, A e^(Vt) z_j>)     (rows summing to one).

Three discretisations of this one ODE, written here in the project's words:

  mft         PETSc's RK4 (TSRK 4) on x, the attention recomputed at every
              stage (one head per slice, V = T V over s in [0, 1]);
  rescaled    classical RK4 on z, the attention recomputed at every stage;
  published   the step of the published code: P and e^(Vt) formed once at
              the step's start and held for its four RK stages, each token's
              stage taken with every token shifted by that token's own
              increment. The velocity depends on differences z_j - z_i only,
              so the shift cancels and the four stages coincide: the step is
              explicit Euler with the attention frozen at the step's start, a
              first-order scheme whatever its stages.

Smooth setting: d = 2, n = 16 tokens N(0, I), N = 4 sequences, A = I, V = I,
T = 1.5, L = 4 slices; k = 1 .. 32 steps per slice (L k steps of dt = T/(L k)
in the rescaled and published schemes); the reference is the rescaled RK4 at
1024 steps per slice.

The literature's setting (its code's defaults): d = 2, n = 20 tokens
uniform in [-5, 5]^2 (here N = 4 such sequences), A = V = I, T = 5, dt = 0.1
(50 steps); the reference is the rescaled RK4 at 20000 steps, checked
against itself at 10000; mft runs 50 RK4 steps (L = 1 slice, k = 50).

Criteria, stated before the runs (errors are max |x - x_ref| / max |x_ref|
at T, orders fitted on log-log axes over k = 2 .. 16):
  1. mft's error falls at fourth order (fitted order within 4 +- 0.5);
  2. mft and the rescaled RK4 agree to their discretisation error: their
     difference falls at fourth order (within 4 +- 0.5);
  3. the published step's error falls at first order (fitted order between
     0.8 and 1.3);
  4. at the literature's setting (dt = 0.1, T = 5) the published step's
     final tokens lie within 1 % of max |x(T)| of the converged flow (the
     resolution at which its figures are read).

  python3 scripts/experiments/published_scheme.py [--quick] [--update-docs] [--jobs J]

Runs locally only (`mft forward` runs). About two minutes on 2 cores.
Writes published_scheme.csv (one row per setting and k: the mft-rescaled
difference and each scheme's error against the reference) and
exp_published_scheme.png.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
from pathlib import Path

import numpy as np
from scipy.linalg import expm

import common
from common import Run

FULL = dict(smooth=dict(d=2, n=16, N=4, T=1.5, L=4, ks=[1, 2, 4, 8, 16, 32], reference=1024),
            literature=dict(d=2, n=20, N=4, T=5.0, dt=0.1, reference=20000, check=10000),
            fit=[2, 4, 8, 16])
QUICK = dict(smooth=dict(d=2, n=8, N=2, T=1.0, L=2, ks=[1, 2, 4], reference=64),
             literature=dict(d=2, n=8, N=1, T=1.0, dt=0.1, reference=400, check=200),
             fit=[1, 2, 4])
COLUMNS = ["setting", "k", "dt", "difference", "mft_error", "rescaled_error", "published_error"]
FIRST_ORDER = (0.8, 1.3)
FOURTH_ORDER = (3.5, 4.5)
LITERATURE_TOLERANCE = 0.01


def attention(A, V, t, Z):
    """P(t, z) for every sequence (Z: (N, n, d)): the softmax over j of
    <A e^(Vt) z_i, A e^(Vt) z_j>."""
    Y = Z @ (A @ expm(V * t)).T
    s = np.einsum("iad,ibd->iab", Y, Y)
    s -= s.max(axis=-1, keepdims=True)
    P = np.exp(s)
    return P / P.sum(axis=-1, keepdims=True)


def rescaled_velocity(P, V, Z):
    """sum_j P_ij V (z_j - z_i): (P Z - Z) V^T, the rows of P summing to one."""
    return (np.einsum("iab,ibd->iad", P, Z) - Z) @ V.T


def rescaled_rk4(X0, A, V, T, steps):
    """x(T) = e^(VT) z(T) by classical RK4 on z, P recomputed at each stage."""
    h, Z = T / steps, np.array(X0, dtype=float)
    for step in range(steps):
        t = step * h
        f = (lambda tt, ZZ: rescaled_velocity(attention(A, V, tt, ZZ), V, ZZ))
        k1 = f(t, Z)
        k2 = f(t + h / 2, Z + h / 2 * k1)
        k3 = f(t + h / 2, Z + h / 2 * k2)
        k4 = f(t + h, Z + h * k3)
        Z = Z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return Z @ expm(V * T).T


def published_step(Z, t, h, A, V):
    """One step of the published code: P at (t, z(t)) held for all stages;
    token i's stage evaluates the velocity of token i with every token
    shifted by token i's own increment (as that code forms its stage
    inputs)."""
    P = attention(A, V, t, Z)

    def token_velocity(shift):
        # Token i's velocity with all tokens moved by shift[:, i] (N, n, d):
        # sum_j P_ij V ((z_j + s_i) - (z_i + s_i)).
        moved = Z[:, None, :, :] + shift[:, :, None, :]             # (N, i, j, d)
        own = Z + shift                                              # (N, i, d)
        return np.einsum("iab,iabd->iad", P, moved - own[:, :, None, :]) @ V.T

    zero = np.zeros_like(Z)
    k1 = h * token_velocity(zero)
    k2 = h * token_velocity(k1 / 2)
    k3 = h * token_velocity(k2 / 2)
    k4 = h * token_velocity(k3)
    return Z + (k1 + 2 * k2 + 2 * k3 + k4) / 6


def published(X0, A, V, T, steps):
    """x(T) by the published step with `steps` steps of T/steps."""
    h, Z = T / steps, np.array(X0, dtype=float)
    for step in range(steps):
        Z = published_step(Z, step * h, h, A, V)
    return Z @ expm(V * T).T


def frozen_euler(X0, A, V, T, steps):
    """Explicit Euler with P at the step's start: what the published step
    reduces to (checked against it on every run)."""
    h, Z = T / steps, np.array(X0, dtype=float)
    for step in range(steps):
        Z = Z + h * rescaled_velocity(attention(A, V, step * h, Z), V, Z)
    return Z @ expm(V * T).T


def order(ks, errors, chosen):
    """The fitted order p of errors ~ C k^-p over the k in `chosen`, with its
    standard error (a deterministic fit: the error is the misfit of a power
    law, not a statistical interval)."""
    pick = [i for i, k in enumerate(ks) if k in chosen]
    x, y = np.log(np.array(ks, float)[pick]), np.log(np.array(errors)[pick])
    A = np.stack([x, np.ones_like(x)], axis=1)
    coef, res, _, _ = np.linalg.lstsq(A, y, rcond=None)
    dof = max(len(x) - 2, 1)
    sigma2 = float(res[0]) / dof if res.size else 0.0
    cov = sigma2 * np.linalg.inv(A.T @ A)
    return -coef[0], float(np.sqrt(cov[0, 0]))


def forward_run(folder, name, X0, A, V, T, L, k):
    """`mft forward` of tokens X0 through L slices of one head, Q = K = A and
    V = T V (so s in [0, 1] is t = T s), k RK4 steps per slice."""
    d = X0.shape[-1]
    data = common.data_file(folder, f"{name}-tokens", X0, np.zeros((X0.shape[0], 1)))
    weights = common.particle_file(folder, f"{name}-given", {
        "Q": np.broadcast_to(A, (L, 1, d, d)), "K": np.broadcast_to(A, (L, 1, d, d)),
        "V": np.broadcast_to(T * V, (L, 1, d, d))})
    return Run(f"{name}-mft-k{k}", {"init.file": str(weights), "data.task": "file", "data.file": str(data),
                                    "model.heads": 1, "model.slices": L, "model.head_dim": d,
                                    "depth.steps_per_slice": k}, command="forward")


def final_tokens(path):
    import h5py
    with h5py.File(path, "r") as f:
        return f["forward/tokens_final"][()]


def main():
    options = common.parser(__doc__).parse_args()
    common.local_only(options, "published_scheme", "`mft forward`")
    size = QUICK if options.quick else FULL
    folder = Path(options.runs) / ("published_scheme" + ("-quick" if options.quick else ""))
    smooth, lit = size["smooth"], size["literature"]
    eye = np.eye(smooth["d"])
    X_smooth = np.random.default_rng(7).standard_normal((smooth["N"], smooth["n"], smooth["d"]))
    X_lit = np.random.default_rng(2023).uniform(-5, 5, (lit["N"], lit["n"], lit["d"]))
    lit_steps = int(round(lit["T"] / lit["dt"]))
    runs = [forward_run(folder, "smooth", X_smooth, eye, eye, smooth["T"], smooth["L"], k) for k in smooth["ks"]]
    runs.append(forward_run(folder, "literature", X_lit, np.eye(lit["d"]), np.eye(lit["d"]), lit["T"], 1, lit_steps))
    paths = common.execute("published_scheme", runs, options)

    rows, frozen_gap = [], 0.0
    reference = rescaled_rk4(X_smooth, eye, eye, smooth["T"], smooth["L"] * smooth["reference"])
    scale = np.abs(reference).max()
    for k in smooth["ks"]:
        steps = smooth["L"] * k
        x_mft = final_tokens(paths[f"smooth-mft-k{k}"])
        x_rk4 = rescaled_rk4(X_smooth, eye, eye, smooth["T"], steps)
        x_pub = published(X_smooth, eye, eye, smooth["T"], steps)
        frozen_gap = max(frozen_gap, np.abs(x_pub - frozen_euler(X_smooth, eye, eye, smooth["T"], steps)).max() / scale)
        rows.append({"setting": "smooth", "k": k, "dt": smooth["T"] / steps,
                     "difference": np.abs(x_mft - x_rk4).max() / scale,
                     "mft_error": np.abs(x_mft - reference).max() / scale,
                     "rescaled_error": np.abs(x_rk4 - reference).max() / scale,
                     "published_error": np.abs(x_pub - reference).max() / scale,
                     "runs": [paths[f"smooth-mft-k{k}"]]})

    eye_lit = np.eye(lit["d"])
    lit_reference = rescaled_rk4(X_lit, eye_lit, eye_lit, lit["T"], lit["reference"])
    lit_scale = np.abs(lit_reference).max()
    reference_gap = np.abs(rescaled_rk4(X_lit, eye_lit, eye_lit, lit["T"], lit["check"]) - lit_reference).max() / lit_scale
    x_mft = final_tokens(paths[f"literature-mft-k{lit_steps}"])
    x_rk4 = rescaled_rk4(X_lit, eye_lit, eye_lit, lit["T"], lit_steps)
    x_pub = published(X_lit, eye_lit, eye_lit, lit["T"], lit_steps)
    frozen_gap = max(frozen_gap, np.abs(x_pub - frozen_euler(X_lit, eye_lit, eye_lit, lit["T"], lit_steps)).max()
                     / lit_scale)
    literature = {"setting": "literature", "k": lit_steps, "dt": lit["T"] / lit_steps,
                  "difference": np.abs(x_mft - x_rk4).max() / lit_scale,
                  "mft_error": np.abs(x_mft - lit_reference).max() / lit_scale,
                  "rescaled_error": np.abs(x_rk4 - lit_reference).max() / lit_scale,
                  "published_error": np.abs(x_pub - lit_reference).max() / lit_scale,
                  "runs": [paths[f"literature-mft-k{lit_steps}"]]}
    rows.append(literature)
    common.write_csv("published_scheme", options, COLUMNS, rows)
    plot(rows, size, X_lit, x_pub, lit_reference, options)

    smooth_rows = [r for r in rows if r["setting"] == "smooth"]
    ks = [r["k"] for r in smooth_rows]

    def fitted(key):
        return order(ks, [r[key] for r in smooth_rows], size["fit"])

    def listing(key):
        return ", ".join(f"{r[key]:.2e}" for r in smooth_rows)

    p_mft, p_diff, p_pub = fitted("mft_error"), fitted("difference"), fitted("published_error")
    fit_text = f"over k = {size['fit']}"
    print(f"measured: the published step against explicit Euler with the frozen attention: at most {frozen_gap:.1e} "
          f"of max |x(T)|; the literature's reference against its half-step run: {reference_gap:.1e}")
    lines = [
        common.criterion("mft's error against the reference falls at fourth order (fitted order within 4 +- 0.5)",
                         FOURTH_ORDER[0] <= p_mft[0] <= FOURTH_ORDER[1],
                         f"order {p_mft[0]:.2f} (misfit {p_mft[1]:.2f}) {fit_text}; errors {listing('mft_error')}"),
        common.criterion("mft and the rescaled RK4 differ at fourth order (fitted order within 4 +- 0.5)",
                         FOURTH_ORDER[0] <= p_diff[0] <= FOURTH_ORDER[1],
                         f"order {p_diff[0]:.2f} (misfit {p_diff[1]:.2f}) {fit_text}; differences "
                         f"{listing('difference')}"),
        common.criterion(f"the published step's error falls at first order (fitted order in [{FIRST_ORDER[0]}, "
                         f"{FIRST_ORDER[1]}])", FIRST_ORDER[0] <= p_pub[0] <= FIRST_ORDER[1],
                         f"order {p_pub[0]:.2f} (misfit {p_pub[1]:.2f}) {fit_text}; errors "
                         f"{listing('published_error')}"),
        common.criterion(f"at the literature's setting (dt = {lit['dt']:g}, T = {lit['T']:g}) the published step is "
                         f"within {LITERATURE_TOLERANCE:g} of max |x(T)| of the converged flow",
                         literature["published_error"] <= LITERATURE_TOLERANCE,
                         f"published {literature['published_error']:.3g}; mft at the same {lit_steps} steps "
                         f"{literature['mft_error']:.2e}; rescaled RK4 {literature['rescaled_error']:.2e}; reference "
                         f"against its half-step run {reference_gap:.1e}"),
    ]
    common.write_criteria("published_scheme", options, lines)


def plot(rows, size, X_lit, x_pub, x_ref, options):
    plt = common.pyplot()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4))
    smooth = [r for r in rows if r["setting"] == "smooth"]
    dt = np.array([r["dt"] for r in smooth])
    for key, label, style in (("mft_error", "mft (RK4, attention at every stage)", "s-"),
                              ("rescaled_error", "RK4 in z (attention at every stage)", "^:"),
                              ("published_error", "published step (attention frozen per step)", "o-"),
                              ("difference", "|x_mft − x_RK4 in z|", "x--")):
        ax.loglog(dt, [r[key] for r in smooth], style, ms=4, label=label)
    mid = len(smooth) // 2
    for p, key in ((4, "mft_error"), (1, "published_error")):
        ax.loglog(dt, smooth[mid][key] * (dt / dt[mid]) ** p, color="0.6", lw=0.8, label=f"slope {p}")
    s = size["smooth"]
    ax.set_xlabel("step dt")
    ax.set_ylabel("max |x − x_ref| / max |x_ref(T)|")
    ax.set_title(f"smooth setting: n = {s['n']}, T = {s['T']:g}")
    lit = size["literature"]
    shrink = np.exp(-lit["T"])  # back to the rescaled z = e^(-T) x, as the literature draws them
    bx.scatter(*(X_lit[0].T), s=10, c="0.75", label="z(0)")
    bx.scatter(*((x_ref[0] * shrink).T), s=40, facecolors="none", edgecolors="k", label="converged flow, z(T)")
    bx.scatter(*((x_pub[0] * shrink).T), s=12, c="C3", marker="x", label=f"published step, dt = {lit['dt']:g}")
    bx.set_aspect("equal", adjustable="datalim")
    bx.set_title(f"the literature's setting (first sequence), T = {lit['T']:g}")
    bx.set_xlabel("z₁")
    bx.set_ylabel("z₂")
    common.finish_axes([ax, bx])
    common.save_figure(fig, "published_scheme", options)


if __name__ == "__main__":
    common.mft_io.exit_on_run_file_error(main)()

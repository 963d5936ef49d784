#!/usr/bin/python3
"""Checks one explicit-Euler training step of an mft run from the file alone.

With train.ts_type = euler, snapshots 0 and 1 must satisfy

    theta_1 = theta_0 - dtau ((M L) dR/dtheta + lambda theta_0)

(M_f L for the MLP's particles). This script reads theta_0 and theta_1,
solves that for the gradient g = dR/dtheta, and checks g against central
finite differences (Richardson-extrapolated) of R computed by an independent NumPy implementation of
the model (scripts/mft_reference.py): the directional derivative <g, u> for
random directions u (all particles, and each species alone) and for u = g.
It also checks R(theta_0) against /history/risk[0].

Exit status 0 when every check passes, 1 otherwise.
"""
import argparse
import sys

import numpy as np

import mft_io
import mft_reference as ref


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="an mft train run file with snapshots of steps 0 and 1")
    parser.add_argument("--directions", type=int, default=4, help="random directions (default 4)")
    parser.add_argument("--tolerance", type=float, default=1e-6,
                        help="relative tolerance of each directional derivative (default 1e-6)")
    args = parser.parse_args()

    run = mft_io.open_run(args.run)
    cfg = run.config
    if cfg.get("train.ts_type") != "euler":
        sys.exit(f"error: {args.run}: train.ts_type is {cfg.get('train.ts_type')!r}; this check needs euler")
    th0 = run.particles(run.snapshot_index(0))
    th1 = run.particles(run.snapshot_index(1))
    dtau, lam = float(cfg["train.dtau"]), float(cfg["train.lambda"])
    L = th0["Q"].shape[0]
    scale = {s: th0[s].shape[1] * L for s in th0}  # M L, or M_f L
    grad = {s: -((th1[s] - th0[s]) / dtau + lam * th0[s]) / scale[s] for s in th0}

    X0, y = run.tokens, run.targets

    def R(theta):
        return ref.risk(X0, y, theta, cfg)

    ok = True
    R0 = R(th0)
    hist = run.history
    if hist is not None:
        rel = abs(R0 - hist["risk"][0]) / abs(R0)
        print(f"R(theta_0): reference {R0:.15e}, file {hist['risk'][0]:.15e}, relative {rel:.1e}")
        ok &= rel < 1e-10

    rng = np.random.default_rng(12345)
    directions = [("g itself", grad)]
    for k in range(args.directions):
        directions.append((f"random {k}", {s: rng.standard_normal(th0[s].shape) for s in th0}))
    for s in th0:
        if th0[s].size:
            directions.append((f"{s} alone", {t: (rng.standard_normal(th0[t].shape) if t == s
                                                  else np.zeros_like(th0[t])) for t in th0}))
    print(f"{'direction':>12} {'<g, u>':>22} {'finite differences':>22} {'relative':>10}")
    def central(u, eps):
        plus = {s: th0[s] + eps * u[s] for s in th0}
        minus = {s: th0[s] - eps * u[s] for s in th0}
        return (R(plus) - R(minus)) / (2 * eps)

    for name, u in directions:
        norm = max(np.abs(u[s]).max() for s in u if u[s].size)
        eps = 1e-3 / norm
        # Richardson extrapolation of two central differences: error O(eps^4).
        fd = (4 * central(u, eps / 2) - central(u, eps)) / 3
        dot = sum(float(np.sum(grad[s] * u[s])) for s in th0)
        rel = abs(fd - dot) / max(abs(dot), 1e-300)
        good = rel < args.tolerance
        ok &= good
        print(f"{name:>12} {dot:22.15e} {fd:22.15e} {rel:10.2e}{'' if good else '  FAIL'}")
    print("all checks passed" if ok else "some checks failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

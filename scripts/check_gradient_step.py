#!/usr/bin/env python3
"""Checks training steps of an mft run from the file alone.

Every step k = 1, 2, 3 with snapshots of steps k - 1 and k
(output.snapshot_every 1) is checked by its method's update, written again
here from MODEL.md §10 (one entry of the table STEPS per train.method):

  flow (train.ts_type euler), sgd (full batches): theta_k = theta_{k-1} - dtau G
  adam:     m_k = beta1 m_{k-1} + (1 - beta1) G, v_k = beta2 v_{k-1} + (1 - beta2) G^2,
            t_k = t_{k-1} + 1, theta_k = theta_{k-1} - dtau (m_k / (1 - beta1^t)) / (sqrt(v_k / (1 - beta2^t)) + eps)
  momentum: u_k = mu u_{k-1} + G, theta_k = theta_{k-1} - dtau u_k

with G = (M L) dR/dtheta + lambda theta_{k-1} (M_f L for the MLP's particles:
each particle dataset is scaled by its own particle count per slice, M or
M_f, times L). The particles and the optimiser's state /optimizer give G;
the update's other equations must hold to 1e-12; and
g = (G - lambda theta_{k-1}) / (M L) is the gradient at theta_{k-1}.

Every gradient g is checked against the forward-mode derivative and central
finite differences (Richardson-extrapolated) of R, both computed by an
independent NumPy implementation of the model (mft.reference in
scripts/mft/reference.py, which follows model.attention through its table of
score maps, model.causal, readout.* and loss.kind): the directional
derivative <g, u> for random directions u (all particles, and each particle
dataset alone) and for u = g. With a kinked score map (relu) or the relu MLP
the finite differences cross kinks in a model of any size and are shown
only; the forward-mode derivative (1e-10) decides.

A run with run.precision = mixed is held to its documented tolerance
instead: R to 1e-6 relative, and each directional derivative to 1e-5 of
|g| |u| (the gradient's 2-norm tolerance; a random direction's <g, u> can
cancel far below |g| |u|, and the float rounding does not).

At the particles of snapshot 0 it also recomputes, with the reference:
R of the training data against /history/risk[0] (relative 1e-10), the
training accuracy against /history/accuracy[0] when the file has it (exact),
when the file holds held-out data (/data/test_tokens), R and accuracy
of that data against /history/test_risk[0] (relative 1e-10) and
/history/test_accuracy[0] (exact), and, when the file has it, the tokens'
spread through depth against /history/token_spread[0] (relative 1e-10).

Minibatches and Langevin noise are random: those runs are refused.

Exit status 0 when every check passes, 1 otherwise.
"""
import argparse
import sys

from mft.tool_python import analysis_python

analysis_python()  # a python3 without numpy runs this again under the one scripts/env.sh finds
import numpy as np  # noqa: E402

from mft import io as mft_io
from mft import reference as ref


def max_relative(a, b):
    """max |a - b| over max |b|, over every dataset of the dicts a and b."""
    num = max(float(np.abs(a[s] - b[s]).max()) for s in b if b[s].size)
    den = max(float(np.abs(b[s]).max()) for s in b if b[s].size)
    return num / max(den, 1e-300)


# The update of each training method, written again from MODEL.md §10: from
# the particles th_a, th_b of steps k - 1 and k and the optimiser's states
# sa, sb (/optimizer, None for a method without state), each gives the
# step's G = (M L) dR/dtheta + lambda theta at th_a, and the relative
# residuals of the update's equations that G does not solve for (each must
# be below 1e-12). Every method must move the particles by a rule of this
# table, or the check refuses the run.

def descent_step(cfg, th_a, th_b, sa, sb):
    """Euler on the velocity: theta_k = theta_{k-1} - dtau G."""
    dtau = float(cfg["train.dtau"])
    return {s: -(th_b[s] - th_a[s]) / dtau for s in th_a}, {}


def adam_step(cfg, th_a, th_b, sa, sb):
    """m = beta1 m + (1 - beta1) G, v = beta2 v + (1 - beta2) G^2, t += 1,
    theta -= dtau (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)."""
    b1, b2 = float(cfg.get("train.beta1", 0.9)), float(cfg.get("train.beta2", 0.999))
    eps, dtau = float(cfg.get("train.eps", 1e-8)), float(cfg["train.dtau"])
    t = sb["t"]
    G = {s: (sb["m"][s] - b1 * sa["m"][s]) / (1 - b1) for s in th_a}
    v = {s: b2 * sa["v"][s] + (1 - b2) * G[s] ** 2 for s in th_a}
    theta = {s: th_a[s] - dtau * (sb["m"][s] / (1 - b1 ** t)) / (np.sqrt(sb["v"][s] / (1 - b2 ** t)) + eps)
             for s in th_a}
    return G, {"t - 1": 0.0 if t == sa["t"] + 1 else 1.0, "v": max_relative(sb["v"], v),
               "theta": max_relative(th_b, theta)}


def momentum_step(cfg, th_a, th_b, sa, sb):
    """The heavy ball: u = mu u + G (u = 0 before the first step), theta -= dtau u."""
    mu, dtau = float(cfg.get("train.momentum", 0.9)), float(cfg["train.dtau"])
    G = {s: sb["u"][s] - mu * sa["u"][s] for s in th_a}
    theta = {s: th_a[s] - dtau * sb["u"][s] for s in th_a}
    return G, {"theta": max_relative(th_b, theta)}


# train.method -> (its step, the /optimizer arrays it keeps, whether a counter t).
STEPS = {
    "flow": (descent_step, (), False),  # with train.ts_type euler
    "sgd": (descent_step, (), False),   # with the full batch
    "adam": (adam_step, ("m", "v"), True),
    "momentum": (momentum_step, ("u",), False),
}


def refusal(cfg, N):
    """Why the run's steps cannot be checked, or ''."""
    method = str(cfg.get("train.method", "flow"))
    if method not in STEPS:
        return f"train.method is {method!r}; the check knows {', '.join(STEPS)}"
    if method == "flow" and cfg.get("train.ts_type") != "euler":
        return f"train.ts_type is {cfg.get('train.ts_type')!r}, not euler"
    if 0 < int(cfg.get("train.batch", 0)) < N or ref.flag(cfg.get("data.online", False)):
        return f"train.method {method} on minibatches (train.batch {int(cfg.get('train.batch', 0))} of N = {N})"
    if float(cfg.get("train.temperature", 0.0)) != 0.0:
        return f"train.temperature is {cfg['train.temperature']} (Langevin noise)"
    return ""


def checked_step(run, cfg, k, scale):
    """Checks the update from snapshot step k - 1 to k; returns (g at
    theta_{k-1}, theta_{k-1}, ok) or None when the file lacks the snapshots."""
    steps = list(run.snapshot_steps)
    if k - 1 not in steps or k not in steps:
        return None
    method = str(cfg.get("train.method", "flow"))
    update, arrays, counter = STEPS[method]
    a, b = run.snapshot_index(k - 1), run.snapshot_index(k)
    th_a, th_b = run.particles(a), run.particles(b)
    sa, sb = (run.optimizer_state(a), run.optimizer_state(b)) if arrays or counter else (None, None)
    needed = list(arrays) + (["t"] if counter else [])
    if sa is not None and any(name not in sa for name in needed):
        sys.exit(f"error: {run.path}: train.method {method} but no /optimizer state ({', '.join(needed)})")
    if (arrays or counter) and sa is None:
        sys.exit(f"error: {run.path}: train.method {method} but no /optimizer state ({', '.join(needed)})")
    G, residuals = update(cfg, th_a, th_b, sa, sb)
    ok = all(r < 1e-12 for r in residuals.values())
    shown = ", ".join(f"{name} relative {r:.1e}" for name, r in residuals.items())
    print(f"{method} step {k}{': ' + shown if shown else ''}{'' if ok else '  FAIL'}")
    lam = float(cfg["train.lambda"])
    grad = {s: (G[s] - lam * th_a[s]) / scale[s] for s in th_a}
    return grad, th_a, ok


def compare_risk(label, value, hist, key, tolerance=1e-10):
    """Prints the reference value against /history/KEY[0]; True when they agree to `tolerance`."""
    if key not in hist or len(hist[key]) == 0:
        print(f"{label}: reference {value:.15e}, file has no /history/{key}  FAIL")
        return False
    stored = float(hist[key][0])
    rel = abs(value - stored) / max(abs(value), 1e-300)
    good = rel < tolerance
    print(f"{label}: reference {value:.15e}, file {stored:.15e}, relative {rel:.1e}{'' if good else '  FAIL'}")
    return good


def compare_accuracy(label, value, hist, key):
    """Prints the reference accuracy against /history/KEY[0]; True when they are equal."""
    if key not in hist or len(hist[key]) == 0:
        print(f"{label}: reference {value:.15g}, file has no /history/{key}  FAIL")
        return False
    stored = float(hist[key][0])
    good = stored == value
    print(f"{label}: reference {value:.15g}, file {stored:.15g}{'' if good else '  FAIL'}")
    return good


def check_directions(X0, y, cfg, th0, grad, args, mixed=False):
    """Checks <grad, u> against the reference's forward-mode derivative and
    finite differences of R at th0 for several directions u; True when all agree."""
    def R(theta):
        return ref.risk(X0, y, theta, cfg)

    ok = True
    rng = np.random.default_rng(12345)
    directions = [("g itself", grad)]
    for k in range(args.directions):
        directions.append((f"random {k}", {s: rng.standard_normal(th0[s].shape) for s in th0}))
    for s in th0:
        if th0[s].size:
            directions.append((f"{s} alone", {t: (rng.standard_normal(th0[t].shape) if t == s
                                                  else np.zeros_like(th0[t])) for t in th0}))

    def central(u, eps):
        plus = {s: th0[s] + eps * u[s] for s in th0}
        minus = {s: th0[s] - eps * u[s] for s in th0}
        return (R(plus) - R(minus)) / (2 * eps)

    # A kinked score map or MLP activation (relu) has a kink at every zero,
    # and in a model of any size a finite-difference step crosses some of
    # them: there the forward-mode derivative of the reference decides, and
    # the finite differences are shown only.
    kinked = ref.kinked(cfg)
    print(f"{'direction':>12} {'<g, u>':>22} {'forward mode':>22} {'relative':>10} "
          f"{'finite differences':>22} {'relative':>10}{'  (shown only: kinks)' if kinked else ''}")
    for name, u in directions:
        norm = max(np.abs(u[s]).max() for s in u if u[s].size)
        eps = 1e-4 / norm
        # Richardson extrapolation of two central differences: error O(eps^4).
        fd = (4 * central(u, eps / 2) - central(u, eps)) / 3
        _, jvp = ref.directional_derivative(X0, y, th0, cfg, u)
        dot = sum(float(np.sum(grad[s] * u[s])) for s in th0)
        # mixed: relative to |g| |u|, the bound the gradient's 2-norm tolerance
        # puts on <g, u>: a random direction's <g, u> may cancel far below it.
        scale = (np.sqrt(sum(float(np.sum(grad[s] ** 2)) for s in th0)) *
                 np.sqrt(sum(float(np.sum(u[s] ** 2)) for s in th0))) if mixed else abs(dot)
        rel_jvp = abs(jvp - dot) / max(scale, 1e-300)
        rel_fd = abs(fd - dot) / max(scale, 1e-300)
        good = rel_jvp < args.jvp_tolerance and (kinked or rel_fd < args.tolerance)
        ok &= good
        print(f"{name:>12} {dot:22.15e} {jvp:22.15e} {rel_jvp:10.2e} {fd:22.15e} {rel_fd:10.2e}"
              f"{'' if good else '  FAIL'}")
    return ok


@mft_io.exit_on_run_file_error
def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", help="an mft train run file with snapshots of steps 0 and 1")
    parser.add_argument("--directions", type=int, default=4, help="random directions (default 4)")
    parser.add_argument("--steps", type=int, default=3,
                        help="check the steps k = 1 .. STEPS that have snapshots of k - 1 and k (default 3)")
    parser.add_argument("--tolerance", type=float, default=1e-6,
                        help="relative tolerance against the finite differences (default 1e-6)")
    parser.add_argument("--jvp-tolerance", type=float, default=1e-10,
                        help="relative tolerance against the forward-mode derivative (default 1e-10)")
    args = parser.parse_args()

    run = mft_io.open_run(args.run)
    cfg = run.config
    X0, y = run.tokens, run.targets
    refuse = refusal(cfg, X0.shape[0])
    if refuse:
        sys.exit(f"error: {args.run}: {refuse}; this check needs the steps of a known method on full batches")
    th0 = run.particles(run.snapshot_index(0))
    scale = {s: th0[s].shape[0] * th0[s].shape[1] for s in th0}  # L M, or L M_f
    # A mixed-precision run's kernels round in float: the documented
    # tolerance against double (docs/PERFORMANCE.md) replaces 1e-10.
    risk_tolerance = 1e-10
    mixed = str(cfg.get("run.precision", "double")) == "mixed"
    if mixed:
        risk_tolerance, args.jvp_tolerance = 1e-6, max(args.jvp_tolerance, 1e-5)
        print("run.precision = mixed: R to 1e-6 and <g, u> to 1e-5 of |g| |u| (the kernels' float rounding)")
    ok = True
    steps = []
    for k in range(1, args.steps + 1):
        checked = checked_step(run, cfg, k, scale)
        if checked is None:
            break
        grad, theta, good = checked
        ok &= good
        steps.append((f"step {k}", grad, theta))
    if not steps:
        sys.exit(f"error: {args.run}: no snapshots of steps 0 and 1 (output.snapshot_every 1)")

    R0, acc0 = ref.evaluate(X0, y, th0, cfg)
    hist = run.history
    if hist is not None:
        ok &= compare_risk("R(theta_0)", R0, hist, "risk", risk_tolerance)
        if "accuracy" in hist or ref.classifies(cfg):
            ok &= compare_accuracy("accuracy(theta_0)", acc0, hist, "accuracy")
        if run.test_tokens is not None:
            Rt, acct = ref.evaluate(run.test_tokens, run.test_targets, th0, cfg)
            ok &= compare_risk("test R(theta_0)", Rt, hist, "test_risk", risk_tolerance)
            if "test_accuracy" in hist or ref.classifies(cfg):
                ok &= compare_accuracy("test accuracy(theta_0)", acct, hist, "test_accuracy")
        if "token_spread" in hist:
            ok &= compare_risk("token spread(theta_0)", ref.token_spread(X0, th0, cfg), hist, "token_spread",
                               risk_tolerance)

    for label, grad, theta in steps:
        print(f"{label}: the gradient at its particles")
        ok &= check_directions(X0, y, cfg, theta, grad, args, mixed)
    print("all checks passed" if ok else "some checks failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

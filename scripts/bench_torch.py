#!/usr/bin/env python3
"""The PyTorch peer of mft-bench: the same scheme written the way an ML
practitioner would, to time mft's training step against.

MODEL.md §3-§6 at the benchmark's size (default the reference size of
mft-bench: N=256, n=16, d=d_h=8, M=64, L=16, RK4 with one step per slice,
softmax attention, the query readout of the last coordinate of the last
token, squared loss): float64, the forward solve unrolled, the gradient by
autograd through the RK stages, an Euler step in tau with the M L time scale.
With --task markov, mft-bench's next-token prediction (MODEL.md §13): every
position's logits are the first k = 3 coordinates of its token, the loss
their cross-entropy against the next symbol averaged over the positions,
the causal mask on and d = 20 unless given.
It prints the seconds of the fastest forward solve and training step of
those it times (with --json one JSON object). python3-torch is not a
dependency of mft: without it the script says so and exits 0.

  python3 scripts/bench_torch.py [--threads 2] [--steps 3] [--task markov] [--json]
"""
import argparse
import json
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in (("N", 256), ("n", 16), ("d", None), ("dh", 8), ("M", 64), ("L", 16)):
        parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--task", default="gaussian", choices=("gaussian", "markov"),
                        help="one output a sequence (gaussian), or next-token prediction (markov)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (match mft's ranks)")
    parser.add_argument("--steps", type=int, default=3, help="timed training steps")
    parser.add_argument("--repeat", type=int, default=3, help="timed forward solves")
    parser.add_argument("--causal", default=None, choices=("false", "true"),
                        help="the causal mask (default: true for --task markov, else false)")
    parser.add_argument("--step-limit", type=float, default=0.0,
                        help="skip the step (say so) when the forward solve says it would take longer than "
                             "this many seconds (0: no limit)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    markov = args.task == "markov"
    args.d = args.d if args.d is not None else (20 if markov else 8)
    args.causal = args.causal or ("true" if markov else "false")
    try:
        import torch
    except ImportError:
        print("bench_torch: python3-torch is not installed; the PyTorch peer is skipped "
              "(apt-get install python3-torch to run it; mft does not need it)")
        return 0

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    dt = torch.float64
    N, n, d, dh, M, L = args.N, args.n, args.d, args.dh, args.M, args.L
    X0 = torch.randn(N, n, d, dtype=dt)
    y = torch.randn(N, dtype=dt)
    k = 3  # markov: the symbols, one-hot in the first k coordinates
    following = torch.randint(0, k, (N, n - 1))
    # mft's default scales (MODEL.md §9): the same at d = d_h = 8 as 0.5 and 1.
    sigma_qk, sigma_v = 0.5 * (8 / d) ** 0.5 * (8 / dh) ** 0.25, (8 / d) ** 0.5
    Q = (sigma_qk * torch.randn(L, M, dh, d, dtype=dt)).requires_grad_()
    K = (sigma_qk * torch.randn(L, M, dh, d, dtype=dt)).requires_grad_()
    V = (sigma_v * torch.randn(L, M, d, d, dtype=dt)).requires_grad_()
    # The causal mask: token a attends to tokens b <= a.
    hidden = torch.triu(torch.ones(n, n, dtype=torch.bool), 1) if args.causal == "true" else None

    def field(l, X):
        """(1/M) sum_m V_m sum_b softmax_b(<Q_m x_a, K_m x_b>) x_b for every token (MODEL.md §3)."""
        qx = torch.einsum("mhe,ine->imnh", Q[l], X)
        kx = torch.einsum("mhe,ine->imnh", K[l], X)
        scores = qx @ kx.transpose(-1, -2)                     # (N, M, n, n)
        if hidden is not None:
            scores = scores.masked_fill(hidden, float("-inf"))
        P = torch.softmax(scores, dim=-1)
        ybar = P @ X.unsqueeze(1)                              # (N, M, n, d)
        return torch.einsum("mde,imne->ind", V[l], ybar) / M

    def solve(X):
        h = 1.0 / L
        for l in range(L):  # RK4, one step per slice
            k1 = field(l, X)
            k2 = field(l, X + 0.5 * h * k1)
            k3 = field(l, X + 0.5 * h * k2)
            k4 = field(l, X + h * k3)
            X = X + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return X

    def risk(X1):
        if markov:  # every position t < n predicts the next symbol
            return torch.nn.functional.cross_entropy(X1[:, :-1, :k].reshape(-1, k), following.reshape(-1))
        return 0.5 * torch.mean((X1[:, -1, -1] - y) ** 2)

    def step(dtau=0.1):
        R = risk(solve(X0))
        R.backward()
        with torch.no_grad():
            for p in (Q, K, V):
                p -= dtau * (M * L) * p.grad
                p.grad = None
        return float(R)

    def fastest(work, count):
        """The fastest of `count` calls, as mft-bench times its phases."""
        best = float("inf")
        for _ in range(count):
            t0 = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - t0)
        return best

    with torch.no_grad():
        solve(X0)  # warm-up
        forward = fastest(lambda: solve(X0), args.repeat)
    benchmark = (f"PyTorch {torch.__version__} float64, N={N} n={n} d={d} d_h={dh} M={M} L={L}, "
                 f"RK4, k=1, softmax{' causal' if hidden is not None else ''}"
                 f"{', task markov (next-token)' if markov else ''}, {args.threads} threads")
    # A step is a forward solve, its autograd backward (about twice the
    # forward's work) and the update: skipped when that would pass the limit.
    if args.step_limit > 0 and 3 * forward * (args.steps + 1) > args.step_limit:
        result = {"benchmark": benchmark, "forward_solve": forward,
                  "skipped": f"PyTorch step skipped: about {3 * forward:.0f} s a step (forward {forward:.1f} s)"}
        print(json.dumps(result) if args.json else result["skipped"])
        return 0
    step()  # warm-up
    training = fastest(step, args.steps)
    result = {"benchmark": benchmark, "forward_solve": forward, "training_step": training}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"bench_torch: {result['benchmark']}")
        print(f"forward solve:  {forward:.6f} s")
        print(f"training step:  {training:.6f} s  (forward + autograd backward + Euler update)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

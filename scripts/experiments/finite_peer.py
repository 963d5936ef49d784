"""The finite transformer that §18 of docs/EXPERIMENTS.md records beside
the mean-field model (induction.py): two attention-only layers of one head
with mft's embedding and next-token readout, trained by Adam on fresh
Markov chains of the task's law (its own draws: mft's stream lives in C++)
and measured on mft's held-out chains of the same seed. Needs PyTorch,
which mft does not depend on; without it the record says so.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import numpy as np

import common

VOCAB, ALPHA = 3, 1.0  # the task of induction.py: three symbols, Dirichlet(1) rows


def sinusoidal(n, p):
    """mft's sinusoidal positions (MODEL.md): pi_{t,2i} = sin(t w_i),
    pi_{t,2i+1} = cos(t w_i), w_i = 10000^(-2i/p), t = 1..n."""
    t = np.arange(1, n + 1)[:, None]
    w = 10000.0 ** (-2.0 * np.arange(p // 2) / p)
    out = np.zeros((n, p))
    out[:, 0::2], out[:, 1::2] = np.sin(t * w), np.cos(t * w)
    return out


def markov_chains(rng, count, n):
    """Chains of the task's law: rows Dirichlet(ALPHA), the first symbol from
    the stationary law."""
    P = rng.dirichlet(np.full(VOCAB, ALPHA), size=(count, VOCAB))
    A = np.transpose(P, (0, 2, 1)) - np.eye(VOCAB)
    A[:, -1, :] = 1.0  # pi (P - I) = 0 with one equation replaced by sum(pi) = 1
    pi = np.clip(np.linalg.solve(A, np.broadcast_to(np.eye(VOCAB)[-1], (count, VOCAB))[..., None])[..., 0], 0, None)

    def draw(prob):  # one symbol per row of prob (count, VOCAB)
        c = np.cumsum(prob / prob.sum(axis=1, keepdims=True), axis=1)
        return np.minimum((c < rng.random(count)[:, None]).sum(axis=1), VOCAB - 1)

    s = np.zeros((count, n), int)
    s[:, 0] = draw(pi)
    for t in range(1, n):
        s[:, t] = draw(P[np.arange(count), s[:, t - 1]])
    return s


def record(found, size, reached_gap):
    """For the record: a finite transformer (2 attention-only layers of one
    head, d_h = 8, the same embedding and readout, PyTorch's default
    initialisation, Adam 3e-3, 64 fresh chains of the law a step) on each
    seed's held-out chains: the first step (every 20) with gap <= reached_gap."""
    try:
        import torch
    except ImportError:
        return "measured: the PyTorch peer was not run (no torch in this interpreter)"
    torch.set_num_threads(1)
    ref = found[(size["reference"], 2)]
    n, p, d = size["tokens"], size["position_dim"], size["d"]
    positions = torch.tensor(sinusoidal(n, p))
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)

    def embed(s):
        x = torch.zeros(s.shape[0], n, d, dtype=torch.float64)
        x[:, :, :VOCAB] = torch.nn.functional.one_hot(torch.as_tensor(s), VOCAB).double()
        x[:, :, VOCAB:VOCAB + p] = positions
        return x

    found_steps = []
    for seed in sorted(ref):
        torch.manual_seed(seed)
        rng = np.random.default_rng(1000 + seed)
        layers = [torch.nn.ModuleDict({k: torch.nn.Linear(d, 8 if k in "qk" else d, bias=False).double()
                                       for k in "qkv"}) for _ in range(2)]
        params = [w for layer in layers for w in layer.parameters()]
        opt = torch.optim.Adam(params, lr=3e-3)

        def loss_of(s):
            x = embed(s)
            for layer in layers:
                a = layer["q"](x) @ layer["k"](x).transpose(1, 2) / np.sqrt(8.0)
                x = x + torch.softmax(a.masked_fill(mask, -np.inf), dim=-1) @ layer["v"](x)
            z = x[:, :-1, :VOCAB]
            return torch.nn.functional.cross_entropy(z.reshape(-1, VOCAB), torch.as_tensor(s[:, 1:]).reshape(-1))

        run = common.mft_io.open_run(str(ref[seed]["run"]))
        held_out = run.test_symbols
        run.close()
        bigram, reached = ref[seed]["base"]["bigram"], None
        for step in range(size["steps"] + 1):
            if step % size["every"] == 0:
                with torch.no_grad():
                    if float(loss_of(held_out)) - bigram <= reached_gap:
                        reached = step
                        break
            if step == size["steps"]:
                break
            opt.zero_grad()
            loss_of(markov_chains(rng, size["batch"], n)).backward()
            opt.step()
        found_steps.append(reached)
    mft_steps = [ref[s]["tau_star"] / size["dtau"] for s in sorted(ref)]
    return (f"measured: the PyTorch peer (2 layers of one attention head, Adam 3e-3, 64 chains a step) reaches gap "
            f"{reached_gap:g} at steps {', '.join('unreached' if x is None else str(x) for x in found_steps)} "
            f"(seeds {', '.join(map(str, sorted(ref)))}); mft L = 2, M = {size['reference']} at steps "
            f"{', '.join(f'{x:.5g}' for x in mft_steps)}")

"""An independent NumPy implementation of mft's model (MODEL.md §3-4):
the attention (and MLP) field of a depth slice, the explicit Runge-Kutta
scheme in depth with fixed steps 1/(L k), the readouts and the risk.

It shares no code with the C++ solver; scripts use it to check numbers in a
run file from the file alone.
"""
import math

import numpy as np

# Explicit tableaux (A, b) of the PETSc RK types this reference knows.
TABLEAUX = {
    "1fe": ([[0.0]], [1.0]),
    "2a": ([[0.0, 0.0], [1.0, 0.0]], [0.5, 0.5]),
    "3bs": ([[0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0.75, 0, 0], [2 / 9, 1 / 3, 4 / 9, 0]],
            [2 / 9, 1 / 3, 4 / 9, 0.0]),
    "4": ([[0, 0, 0, 0], [0.5, 0, 0, 0], [0, 0.5, 0, 0], [0, 0, 1, 0]],
          [1 / 6, 1 / 3, 1 / 3, 1 / 6]),
}


def _erf(z):
    return np.vectorize(math.erf)(z)


def activation(name, z):
    if name == "relu":
        return np.maximum(z, 0.0)
    if name == "gelu":
        return z * 0.5 * (1.0 + _erf(z / math.sqrt(2.0)))
    if name == "huber-relu":
        return np.where(z <= 0, 0.0, np.where(z <= 1, 0.5 * z * z, z - 0.5))
    raise ValueError(f"unknown activation {name!r}")


def attention_field(X, Q, K, V):
    """(1/M) sum_m V_m sum_b softmax_b(<Q_m x_a, K_m x_b>) x_b for X (N, n, d)."""
    qx = np.einsum("mhd,ind->imnh", Q, X)
    kx = np.einsum("mhd,ind->imnh", K, X)
    s = np.einsum("imah,imbh->imab", qx, kx)
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    y = np.einsum("imab,ibd->imad", p, X)
    return np.einsum("mkd,imad->iak", V, y) / Q.shape[0]


def mlp_field(X, W1, W2, act):
    """(1/M_f) sum_m W2_m act(W1_m x) for every token."""
    z = np.einsum("mfd,ind->imnf", W1, X)
    return np.einsum("mkf,imnf->ink", W2, activation(act, z)) / W1.shape[0]


def field(X, particles, l, act):
    F = attention_field(X, particles["Q"][l], particles["K"][l], particles["V"][l])
    if "W1" in particles and particles["W1"].shape[1] > 0:
        F = 0.5 * (F + mlp_field(X, particles["W1"][l], particles["W2"][l], act))
    return F


def tableau(config):
    ts = config["depth.ts_type"]
    rk = "1fe" if ts == "euler" else config["depth.rk_type"]
    if ts not in ("euler", "rk") or rk not in TABLEAUX:
        raise ValueError(f"the reference knows depth.ts_type euler and rk with rk_type in "
                         f"{sorted(TABLEAUX)}, not {ts} {rk}")
    A, b = TABLEAUX[rk]
    return np.array(A, dtype=float), np.array(b, dtype=float)


def forward(X0, particles, config):
    """X(1) by the explicit RK scheme, k steps of 1/(L k) per slice."""
    A, b = tableau(config)
    L = particles["Q"].shape[0]
    k = int(config["depth.steps_per_slice"])
    h = 1.0 / (L * k)
    act = config.get("model.activation", "relu")
    X = np.array(X0, dtype=float)
    for step in range(L * k):
        l = step // k
        stages = []
        for i in range(len(b)):
            Y = X + h * sum(A[i, j] * stages[j] for j in range(i)) if i else X
            stages.append(field(Y, particles, l, act))
        X = X + h * sum(b[i] * stages[i] for i in range(len(b)))
    return X


def predict(X1, config):
    c = int(config["readout.coord"])
    if config["readout.kind"] == "query":
        return X1[:, -1, c]
    w = np.asarray(config["readout.weights"], dtype=float)
    return X1.mean(axis=1) @ w


def risk(X0, targets, particles, config):
    yhat = predict(forward(X0, particles, config), config)
    return 0.5 * np.mean((yhat - targets[:, 0]) ** 2)

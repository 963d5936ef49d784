"""An independent NumPy implementation of mft's model (MODEL.md §3-4, §10):
the attention (and MLP) field of a depth slice with any score map of
SCORE_MAPS and an optional causal mask, the explicit Runge-Kutta scheme in depth with
fixed steps 1/(L k), the scalar or vector readouts, the squared or
cross-entropy risk and the accuracy.

Configuration keys are read from a run's /config ({'section.key': value});
keys that older files lack take their defaults: model.attention softmax,
model.causal false, readout.dim 1, readout.coord d - d_out, loss.kind squared.

It shares no code with the C++ solver; scripts use it to check numbers in a
run file from the file alone.
"""
import math
from typing import Callable, NamedTuple

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


def flag(value):
    """A boolean configuration value, which files store as "true"/"false"."""
    if isinstance(value, (bytes, np.bytes_)):
        value = value.decode()
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off", ""):
            return False
        raise ValueError(f"not a boolean: {value!r}")
    return bool(value)


def _visible(n, causal):
    """(seen, count): seen[a, b] whether token a attends to token b (every
    token, or b <= a with the causal mask), count[a] = |A_a| as a column."""
    if causal:
        return np.tril(np.ones((n, n), dtype=bool)), np.arange(1, n + 1, dtype=float)[:, None]
    return np.ones((n, n), dtype=bool), np.full((n, 1), float(n))


def _softmax(s, seen, count):
    s = np.where(seen, s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def _sigmoid(s, seen, count):
    z = s - np.log(count)
    return np.where(seen, 0.5 * (1.0 + np.tanh(0.5 * z)), 0.0)


class ScoreMap(NamedTuple):
    """A score map of MODEL.md §10. weights(s, seen, count) gives P[..., a, b]
    from the scores s; derivative(s, ds, p, seen, count) gives dP along the
    scores' derivative ds at weights p; both are zero outside A_a. kinked:
    whether P has kinks in s (finite differences may cross them)."""
    weights: Callable
    derivative: Callable
    kinked: bool = False


# One entry per score map of mft (its own formula, written again here).
SCORE_MAPS = {
    # exp(s_ab) / sum_{c in A_a} exp(s_ac)
    "softmax": ScoreMap(_softmax,
                        lambda s, ds, p, seen, count: p * (ds - np.sum(p * ds, axis=-1, keepdims=True))),
    # max(s_ab, 0) / |A_a|; the derivative of max(a, 0) taken as 1[a > 0], as the adjoint takes it
    "relu": ScoreMap(lambda s, seen, count: np.where(seen, np.maximum(s, 0.0), 0.0) / count,
                     lambda s, ds, p, seen, count: np.where(seen & (s > 0), ds, 0.0) / count, kinked=True),
    # s_ab / |A_a|
    "linear": ScoreMap(lambda s, seen, count: np.where(seen, s, 0.0) / count,
                       lambda s, ds, p, seen, count: np.where(seen, ds, 0.0) / count),
    # sigma(s_ab - log |A_a|), sigma(z) = 1 / (1 + exp(-z)), each weight on its own
    "sigmoid": ScoreMap(_sigmoid, lambda s, ds, p, seen, count: np.where(seen, p * (1.0 - p) * ds, 0.0)),
}


def attention_options(config):
    """(score map, causal) of a configuration: a name of SCORE_MAPS and a bool."""
    kind = str(config.get("model.attention", "softmax"))
    if kind not in SCORE_MAPS:
        raise ValueError(f"unknown model.attention {kind!r}: the reference knows {', '.join(SCORE_MAPS)}")
    return kind, flag(config.get("model.causal", False))


def score_weights(s, attention="softmax", causal=False):
    """P[..., a, b] from the scores s[..., a, b] = <Q x_a, K x_b> (MODEL.md §10)
    by the score map `attention` of SCORE_MAPS, over the set A_a of tokens that
    token a attends to: every token, or with the causal mask the tokens b <= a.
    P is zero outside A_a."""
    if attention not in SCORE_MAPS:
        raise ValueError(f"unknown score map {attention!r}")
    seen, count = _visible(s.shape[-1], causal)
    return SCORE_MAPS[attention].weights(s, seen, count)


def score_weights_jvp(s, ds, attention="softmax", causal=False):
    """(P, dP): the weights and their derivative along ds."""
    seen, count = _visible(s.shape[-1], causal)
    entry = SCORE_MAPS[attention]
    p = entry.weights(s, seen, count)
    return p, entry.derivative(s, ds, p, seen, count)


def attention_field(X, Q, K, V, attention="softmax", causal=False):
    """(1/M) sum_m V_m sum_{b in A_a} P_m[a, b] x_b for X (N, n, d), with the
    score map `attention` (a name of SCORE_MAPS) and the causal mask or none."""
    qx = np.einsum("mhd,ind->imnh", Q, X)
    kx = np.einsum("mhd,ind->imnh", K, X)
    s = np.einsum("imah,imbh->imab", qx, kx)
    p = score_weights(s, attention, causal)
    y = np.einsum("imab,ibd->imad", p, X)
    return np.einsum("mkd,imad->iak", V, y) / Q.shape[0]


def mlp_field(X, W1, W2, act):
    """(1/M_f) sum_m W2_m act(W1_m x) for every token."""
    z = np.einsum("mfd,ind->imnf", W1, X)
    return np.einsum("mkf,imnf->ink", W2, activation(act, z)) / W1.shape[0]


def field(X, particles, l, act, attention="softmax", causal=False):
    """The velocity F_l(X) of slice l: attention, averaged with the MLP when present."""
    F = attention_field(X, particles["Q"][l], particles["K"][l], particles["V"][l], attention, causal)
    if "W1" in particles and particles["W1"].shape[1] > 0:
        F = 0.5 * (F + mlp_field(X, particles["W1"][l], particles["W2"][l], act))
    return F


def _rowdot(a, b):
    return np.sum(a * b, axis=-1, keepdims=True)


def _sphere_project_jvp(X, dX, F, dF):
    """(Pi F, d(Pi F)) along (dX, dF), Pi(x) F = F - (<x, F> / |x|^2) x."""
    xx = _rowdot(X, X)
    alpha = _rowdot(X, F) / xx
    dalpha = (_rowdot(dX, F) + _rowdot(X, dF)) / xx - 2.0 * _rowdot(X, F) * _rowdot(X, dX) / xx ** 2
    return F - alpha * X, dF - dalpha * X - alpha * dX


class TokenNorm(NamedTuple):
    """A constraint on the tokens (model.norm, MODEL.md §10): X(0) from the
    data's tokens, and the projection of the velocity with its derivative
    project_jvp(X, dX, F, dF) -> (Pi F, d(Pi F))."""
    initial: Callable
    project_jvp: Callable


# One entry per token norm of mft.
NORMS = {
    "none": TokenNorm(lambda X: X, lambda X, dX, F, dF: (F, dF)),
    # x / |x| at s = 0, the velocity on the tangent space of the sphere
    "sphere": TokenNorm(lambda X: X / np.sqrt(_rowdot(X, X)), _sphere_project_jvp),
}


def token_norm(config):
    """The configuration's entry of NORMS."""
    name = str(config.get("model.norm", "none"))
    if name not in NORMS:
        raise ValueError(f"unknown model.norm {name!r}: the reference knows {', '.join(NORMS)}")
    return NORMS[name]


def tableau(config):
    ts = config["depth.ts_type"]
    rk = "1fe" if ts == "euler" else config["depth.rk_type"]
    if ts not in ("euler", "rk") or rk not in TABLEAUX:
        raise ValueError(f"the reference knows depth.ts_type euler and rk with rk_type in "
                         f"{sorted(TABLEAUX)}, not {ts} {rk}")
    A, b = TABLEAUX[rk]
    return np.array(A, dtype=float), np.array(b, dtype=float)


def integrate(states, L, config, rhs):
    """The explicit RK scheme, k steps of 1/(L k) per slice, on a tuple of
    arrays that move together: rhs(l, states) gives their velocities."""
    A, b = tableau(config)
    k = int(config["depth.steps_per_slice"])
    h = 1.0 / (L * k)
    X = tuple(np.array(x, dtype=float) for x in states)
    for step in range(L * k):
        l = step // k
        stages = []
        for i in range(len(b)):
            Y = tuple(x + h * sum(A[i, j] * stages[j][q] for j in range(i)) if i else x
                      for q, x in enumerate(X))
            stages.append(rhs(l, Y))
        X = tuple(x + h * sum(b[i] * stages[i][q] for i in range(len(b))) for q, x in enumerate(X))
    return X


def forward(X0, particles, config):
    """X(1) by the explicit RK scheme, k steps of 1/(L k) per slice, from
    X(0), the data's tokens X0 under the token norm."""
    act = config.get("model.activation", "relu")
    attention, causal = attention_options(config)
    norm = token_norm(config)

    def velocity(l, Y):
        F = field(Y[0], particles, l, act, attention, causal)
        return (norm.project_jvp(Y[0], Y[0], F, F)[0],)

    (X,) = integrate((norm.initial(np.asarray(X0, dtype=float)),), particles["Q"].shape[0], config, velocity)
    return X


# The readouts of MODEL.md §10, one entry each: yhat (N, d_out) from the
# final tokens X1 (N, n, d), the first coordinate c and the matrix W.
READOUTS = {
    # coordinates c..c+d_out-1 of the last token
    "query": lambda X1, c, W: np.array(X1[:, -1, c:c + W.shape[0]]),
    # W times the mean token
    "mean": lambda X1, c, W: X1.mean(axis=1) @ W.T,
}
# The readouts whose W is readout.weights (the others read coordinates).
WEIGHTED_READOUTS = ("mean",)


def readout(config, d):
    """(kind, d_out, c, W) of a configuration for token dimension d. W is the
    (d_out, d) matrix of a weighted readout: readout.weights, row-major (old
    files give a vector of length d), or rows e_c..e_{c+d_out-1} when it is
    absent. The other readouts ignore readout.weights."""
    kind = str(config.get("readout.kind", "query"))
    d_out = int(config.get("readout.dim", 1))
    c = int(config.get("readout.coord", d - d_out))
    if c < 0:
        c += d - d_out + 1  # the block of d_out coordinates ends that far from the end
    if d_out < 1 or not 0 <= c <= d - d_out:
        raise ValueError(f"readout.dim {d_out} and readout.coord {c} do not fit d = {d}")
    if kind not in READOUTS:
        raise ValueError(f"unknown readout.kind {kind!r}: the reference knows {', '.join(READOUTS)}")
    W = np.eye(d)[c:c + d_out]
    weights = config.get("readout.weights")
    if kind in WEIGHTED_READOUTS and weights is not None and np.size(weights) > 0:
        if np.size(weights) != d_out * d:
            raise ValueError(f"readout.weights has {np.size(weights)} values, not d_out d = {d_out * d}")
        W = np.asarray(weights, dtype=float).reshape(d_out, d)
    return kind, d_out, c, W


def predict(X1, config):
    """yhat (N, d_out) by the configuration's readout (READOUTS)."""
    kind, d_out, c, W = readout(config, X1.shape[-1])
    return READOUTS[kind](X1, c, W)


def as_targets(targets, d_out=None):
    """Targets as an (N, d_out) array (a 1-D array is one column)."""
    y = np.asarray(targets, dtype=float)
    y = y.reshape(y.shape[0], -1)
    if d_out is not None and y.shape[1] != d_out:
        raise ValueError(f"targets have {y.shape[1]} columns, readout.dim is {d_out}")
    return y


def logsumexp(z):
    """log sum_c exp(z[:, c]) per row."""
    top = z.max(axis=1)
    return top + np.log(np.exp(z - top[:, None]).sum(axis=1))


def _softmax_rows(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# The losses of MODEL.md §4 and §10, one entry each: (R, N dR/dyhat) of
# yhat (N, d_out) against targets y (N, d_out), each summed over the rows,
# and whether it is a classifier's (its runs report accuracy).
LOSSES = {
    # (1/2) |yhat_i - y_i|^2
    "squared": (lambda yhat, y: 0.5 * np.sum((yhat - y) ** 2), lambda yhat, y: yhat - y, False),
    # logsumexp_c yhat_ic - sum_c y_ic yhat_ic
    "cross-entropy": (lambda yhat, y: np.sum(logsumexp(yhat) - np.sum(y * yhat, axis=1)),
                      lambda yhat, y: _softmax_rows(yhat) - y, True),
}


def classifies(config):
    """Whether the configuration's loss is a classifier's."""
    return LOSSES[loss_kind(config)][2]


def loss(yhat, targets, kind="squared"):
    """R of predictions yhat (N, d_out) against targets (N, d_out): the loss
    `kind` of LOSSES averaged over the N rows."""
    y = as_targets(targets, yhat.shape[1])
    if kind not in LOSSES:
        raise ValueError(f"unknown loss.kind {kind!r}: the reference knows {', '.join(LOSSES)}")
    return LOSSES[kind][0](yhat, y) / y.shape[0]


def share_correct(yhat, targets):
    """The share of rows i with argmax_c yhat_ic == argmax_c y_ic (first maximum on ties)."""
    y = as_targets(targets, yhat.shape[1])
    hits = int(np.count_nonzero(np.argmax(yhat, axis=1) == np.argmax(y, axis=1)))
    return hits / y.shape[0]


def loss_kind(config):
    return str(config.get("loss.kind", "squared"))


def risk(X0, targets, particles, config):
    """R of the data (X0 (N, n, d), targets (N, d_out)) with the loss of config."""
    yhat = predict(forward(X0, particles, config), config)
    return loss(yhat, targets, loss_kind(config))


def accuracy(X0, targets, particles, config):
    """The share of sequences whose predicted class (argmax of yhat) is the target's."""
    return share_correct(predict(forward(X0, particles, config), config), targets)


def evaluate(X0, targets, particles, config):
    """(R, accuracy) from one forward pass."""
    yhat = predict(forward(X0, particles, config), config)
    return loss(yhat, targets, loss_kind(config)), share_correct(yhat, targets)


# --- forward-mode derivative: the directional derivative of R ---------------
# Exact for kinked score maps (relu) and the relu MLP as well (the derivative
# of max(a, 0) taken as 1[a > 0], as the adjoint takes it), where finite
# differences of a large model cross kinks for any step.

def activation_slope(name, z):
    if name == "relu":
        return (z > 0).astype(float)
    if name == "gelu":
        return 0.5 * (1.0 + _erf(z / math.sqrt(2.0))) + z * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    if name == "huber-relu":
        return np.where(z <= 0, 0.0, np.where(z <= 1, z, 1.0))
    raise ValueError(f"unknown activation {name!r}")


def attention_field_jvp(X, dX, Q, K, V, dQ, dK, dV, attention, causal):
    """(F, dF): the attention field and its derivative along (dX, dQ, dK, dV)."""
    qx = np.einsum("mhd,ind->imnh", Q, X)
    kx = np.einsum("mhd,ind->imnh", K, X)
    dqx = np.einsum("mhd,ind->imnh", dQ, X) + np.einsum("mhd,ind->imnh", Q, dX)
    dkx = np.einsum("mhd,ind->imnh", dK, X) + np.einsum("mhd,ind->imnh", K, dX)
    s = np.einsum("imah,imbh->imab", qx, kx)
    ds = np.einsum("imah,imbh->imab", dqx, kx) + np.einsum("imah,imbh->imab", qx, dkx)
    p, dp = score_weights_jvp(s, ds, attention, causal)
    y = np.einsum("imab,ibd->imad", p, X)
    dy = np.einsum("imab,ibd->imad", dp, X) + np.einsum("imab,ibd->imad", p, dX)
    M = Q.shape[0]
    F = np.einsum("mkd,imad->iak", V, y) / M
    dF = (np.einsum("mkd,imad->iak", dV, y) + np.einsum("mkd,imad->iak", V, dy)) / M
    return F, dF


def mlp_field_jvp(X, dX, W1, W2, dW1, dW2, act):
    z = np.einsum("mfd,ind->imnf", W1, X)
    dz = np.einsum("mfd,ind->imnf", dW1, X) + np.einsum("mfd,ind->imnf", W1, dX)
    h, dh = activation(act, z), activation_slope(act, z) * dz
    Mf = W1.shape[0]
    F = np.einsum("mkf,imnf->ink", W2, h) / Mf
    dF = (np.einsum("mkf,imnf->ink", dW2, h) + np.einsum("mkf,imnf->ink", W2, dh)) / Mf
    return F, dF


def field_jvp(X, dX, particles, direction, l, act, attention, causal, norm=NORMS["none"]):
    p, u = particles, direction
    F, dF = attention_field_jvp(X, dX, p["Q"][l], p["K"][l], p["V"][l], u["Q"][l], u["K"][l], u["V"][l],
                                attention, causal)
    if "W1" in p and p["W1"].shape[1] > 0:
        G, dG = mlp_field_jvp(X, dX, p["W1"][l], p["W2"][l], u["W1"][l], u["W2"][l], act)
        F, dF = 0.5 * (F + G), 0.5 * (dF + dG)
    return norm.project_jvp(X, dX, F, dF)


def directional_derivative(X0, targets, particles, config, direction):
    """(R, dR/dtheta . u) for the direction u (a dict like the particles),
    by forward-mode differentiation through the same RK scheme."""
    act = config.get("model.activation", "relu")
    attention, causal = attention_options(config)
    norm = token_norm(config)
    X0 = norm.initial(np.asarray(X0, dtype=float))  # the tokens do not move with theta
    X, dX = integrate((X0, np.zeros_like(X0)), particles["Q"].shape[0], config,
                      lambda l, Y: field_jvp(Y[0], Y[1], particles, direction, l, act, attention, causal, norm))
    yhat, dyhat = predict(X, config), predict(dX, config)  # the readout is linear
    y = as_targets(targets, yhat.shape[1])
    slope = LOSSES[loss_kind(config)][1](yhat, y) / y.shape[0]
    return loss(yhat, y, loss_kind(config)), float(np.sum(slope * dyhat))

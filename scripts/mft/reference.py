"""An independent NumPy implementation of mft's model (MODEL.md §3-4, §10):
the field of a depth slice, the mean over the particle species of SPECIES
(the heads' attention with any score map of SCORE_MAPS and an optional
causal mask, the MLP's neurons), the explicit Runge-Kutta scheme in depth with
fixed steps 1/(L k), the scalar or vector readouts, the squared or
cross-entropy risk and the accuracy.

Configuration keys are read from a run's /config ({'section.key': value});
keys that older files lack take their defaults: model.attention softmax,
model.causal false, model.heads 16, model.mlp_particles 0, readout.dim 1,
readout.coord d - d_out, loss.kind squared.

Each table of formulas (SCORE_MAPS, ACTIVATIONS, NORMS, READOUTS, LOSSES,
SPECIES) maps a name to a factory entry(config) -> the entry's formulas,
bound to the configuration as mft's registries bind theirs: an entry reads
its own keys with their defaults, so one that owns a key is still one entry
and its callers do not change. Callers look entries up through one function
per table (score_map, activation, token_norm, readout, loss_function;
particle_species, by the particles rather than by a key), never by indexing
it.

It shares no code with the C++ solver; scripts use it to check numbers in a
run file from the file alone.
"""
import math
from typing import Callable, NamedTuple, Optional

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


def _entry(table, key, default, config):
    """The entry of `table` that configuration key `key` names (`default`
    when the configuration lacks it), bound to the configuration."""
    name = str(config.get(key, default))
    if name not in table:
        raise ValueError(f"unknown {key} {name!r}: the reference knows {', '.join(table)}")
    return table[name](config)


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


# --- the score maps and the attention ------------------------------------

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


# One entry per score map of mft (its own formula, written again here):
# model.attention -> entry(config) -> ScoreMap.
SCORE_MAPS = {
    # exp(s_ab) / sum_{c in A_a} exp(s_ac)
    "softmax": lambda config: ScoreMap(
        _softmax, lambda s, ds, p, seen, count: p * (ds - np.sum(p * ds, axis=-1, keepdims=True))),
    # max(s_ab, 0) / |A_a|; the derivative of max(a, 0) taken as 1[a > 0], as the adjoint takes it
    "relu": lambda config: ScoreMap(
        lambda s, seen, count: np.where(seen, np.maximum(s, 0.0), 0.0) / count,
        lambda s, ds, p, seen, count: np.where(seen & (s > 0), ds, 0.0) / count, kinked=True),
    # s_ab / |A_a|
    "linear": lambda config: ScoreMap(
        lambda s, seen, count: np.where(seen, s, 0.0) / count,
        lambda s, ds, p, seen, count: np.where(seen, ds, 0.0) / count),
    # sigma(s_ab - log |A_a|), sigma(z) = 1 / (1 + exp(-z)), each weight on its own
    "sigmoid": lambda config: ScoreMap(
        _sigmoid, lambda s, ds, p, seen, count: np.where(seen, p * (1.0 - p) * ds, 0.0)),
}


def score_map(config):
    """The configuration's entry of SCORE_MAPS (model.attention)."""
    return _entry(SCORE_MAPS, "model.attention", "softmax", config)


class Attention(NamedTuple):
    """The attention of a configuration: its score map and whether the
    causal mask (model.causal) limits the tokens A_a that token a attends
    to to b <= a (else every token)."""
    score_map: ScoreMap
    causal: bool

    def weights(self, s):
        """P[..., a, b] from the scores s[..., a, b] = <Q x_a, K x_b>
        (MODEL.md §10), zero outside A_a."""
        seen, count = _visible(s.shape[-1], self.causal)
        return self.score_map.weights(s, seen, count)

    def weights_jvp(self, s, ds):
        """(P, dP): the weights and their derivative along ds."""
        seen, count = _visible(s.shape[-1], self.causal)
        p = self.score_map.weights(s, seen, count)
        return p, self.score_map.derivative(s, ds, p, seen, count)


def attention(config):
    """The configuration's Attention: its score map and mask."""
    return Attention(score_map(config), flag(config.get("model.causal", False)))


# --- the MLP's activations -----------------------------------------------

def _erf(z):
    return np.vectorize(math.erf)(z)


class Activation(NamedTuple):
    """An activation of the MLP (model.activation): value(z) and slope(z),
    its derivative (at a kink the adjoint's one-sided choice); kinked: whether
    it has kinks (finite differences may cross them)."""
    value: Callable
    slope: Callable
    kinked: bool = False


# model.activation -> entry(config) -> Activation.
ACTIVATIONS = {
    # max(z, 0), its slope taken as 1[z > 0]
    "relu": lambda config: Activation(lambda z: np.maximum(z, 0.0), lambda z: (z > 0).astype(float), kinked=True),
    # z Phi(z)
    "gelu": lambda config: Activation(
        lambda z: z * 0.5 * (1.0 + _erf(z / math.sqrt(2.0))),
        lambda z: 0.5 * (1.0 + _erf(z / math.sqrt(2.0))) + z * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)),
    # 0, z^2 / 2, z - 1/2 on z <= 0, 0 < z <= 1, z > 1
    "huber-relu": lambda config: Activation(
        lambda z: np.where(z <= 0, 0.0, np.where(z <= 1, 0.5 * z * z, z - 0.5)),
        lambda z: np.where(z <= 0, 0.0, np.where(z <= 1, z, 1.0))),
}


def activation(config):
    """The configuration's entry of ACTIVATIONS (model.activation)."""
    return _entry(ACTIVATIONS, "model.activation", "relu", config)


# --- the field of a depth slice ------------------------------------------

def attention_field(X, Q, K, V, attention):
    """(1/M) sum_m V_m sum_{b in A_a} P_m[a, b] x_b for X (N, n, d), with
    the score map and mask of `attention` (an Attention)."""
    qx = np.einsum("mhd,ind->imnh", Q, X)
    kx = np.einsum("mhd,ind->imnh", K, X)
    s = np.einsum("imah,imbh->imab", qx, kx)
    p = attention.weights(s)
    y = np.einsum("imab,ibd->imad", p, X)
    return np.einsum("mkd,imad->iak", V, y) / Q.shape[0]


def mlp_field(X, W1, W2, act):
    """(1/M_f) sum_m W2_m act(W1_m x) for every token (act an Activation)."""
    z = np.einsum("mfd,ind->imnf", W1, X)
    return np.einsum("mkf,imnf->ink", W2, act.value(z)) / W1.shape[0]


class Species(NamedTuple):
    """A particle species of mft (its ParticleSpecies): name, the `species`
    attribute of its datasets; matrices, the names of its particle datasets
    in mft's order, each (L, M, rows, cols); field(X, mats) -> F, the
    species' mean over its particles of slice l for X (N, n, d), mats its
    matrices' slices (M, rows, cols) in that order; field_jvp(X, dX, mats,
    dmats) -> (F, dF), with the derivative along (dX, dmats); count, its
    particles per slice as the configuration sets them (0: the run has
    none); kinked: whether its field has kinks in theta."""
    name: str
    matrices: tuple
    field: Callable
    field_jvp: Callable
    count: int = 0
    kinked: bool = False


def _heads(config):
    att = attention(config)
    return Species("heads", ("Q", "K", "V"),
                   lambda X, m: attention_field(X, *m, att),
                   lambda X, dX, m, dm: attention_field_jvp(X, dX, *m, *dm, att),
                   count=int(config.get("model.heads", 16)), kinked=att.score_map.kinked)


def _neurons(config):
    act = activation(config)
    return Species("neurons", ("W1", "W2"),
                   lambda X, m: mlp_field(X, *m, act),
                   lambda X, dX, m, dm: mlp_field_jvp(X, dX, *m, *dm, act),
                   count=int(config.get("model.mlp_particles", 0)), kinked=act.kinked)


# One entry per particle species of mft, in the order of its Particles::species
# (the order in which the species' fields are summed): name -> entry(config) -> Species.
SPECIES = {"heads": _heads, "neurons": _neurons}


def particle_species(config, particles):
    """The entries of SPECIES that the particles ({dataset name: (L, M,
    rows, cols)}) hold, bound to the configuration, in the table's order: a
    species is held when every one of its matrices is there with M > 0."""
    held = []
    for entry in SPECIES.values():
        s = entry(config)
        if all(m in particles and np.shape(particles[m])[1] > 0 for m in s.matrices):
            held.append(s)
    if not held:
        raise ValueError(f"the particles ({', '.join(particles) or 'none'}) hold no species of the "
                         f"reference ({', '.join(SPECIES)})")
    return held


def slices(species, particles):
    """L, the depth slices of the particles (any species' first axis)."""
    return particles[species[0].matrices[0]].shape[0]


def kinked(config):
    """Whether R has kinks in theta, where finite differences may cross
    them: those of a species the configuration gives particles (the score
    map's, the MLP's activation)."""
    return any(s.kinked for s in (entry(config) for entry in SPECIES.values()) if s.count > 0)


def _species_mean(parts):
    """The mean of the species' fields, summed in the table's order and
    scaled by 1/S as mft's share (a lone species' field as it is)."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total if len(parts) == 1 else (1.0 / len(parts)) * total


def _slice_of(particles, s, l):
    return [particles[m][l] for m in s.matrices]


def field(X, particles, l, species):
    """The velocity F_l(X) of slice l: the mean over the species (a list of
    Species, from particle_species) of each one's field."""
    return _species_mean([s.field(X, _slice_of(particles, s, l)) for s in species])


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


# One entry per token norm of mft: model.norm -> entry(config) -> TokenNorm.
NORMS = {
    "none": lambda config: TokenNorm(lambda X: X, lambda X, dX, F, dF: (F, dF)),
    # x / |x| at s = 0, the velocity on the tangent space of the sphere
    "sphere": lambda config: TokenNorm(lambda X: X / np.sqrt(_rowdot(X, X)), _sphere_project_jvp),
}


def token_norm(config):
    """The configuration's entry of NORMS (model.norm)."""
    return _entry(NORMS, "model.norm", "none", config)


# --- depth ---------------------------------------------------------------

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
    species, norm = particle_species(config, particles), token_norm(config)

    def velocity(l, Y):
        F = field(Y[0], particles, l, species)
        return (norm.project_jvp(Y[0], Y[0], F, F)[0],)

    (X,) = integrate((norm.initial(np.asarray(X0, dtype=float)),), slices(species, particles), config, velocity)
    return X


def token_spread(X0, particles, config):
    """The tokens' spread at s = 1 over their spread at s = 0 (after the
    token norm): sum_i sum_a |x_ia - xbar_i|^2 at each end, xbar_i the mean
    token of sequence i (mft's /history/token_spread)."""
    def spread(X):
        return float(np.sum((X - X.mean(axis=1, keepdims=True)) ** 2))

    start = token_norm(config).initial(np.asarray(X0, dtype=float))
    return spread(forward(X0, particles, config)) / spread(start)


# --- readouts, losses and the risk ---------------------------------------

class Readout(NamedTuple):
    """A readout of MODEL.md §10: predict(X1) gives yhat (N, d_out) from the
    final tokens X1 (N, n, d), linearly. classes: the values of one
    prediction when a sequence makes several (next-token: k per position,
    and the loss averages over every position); None: one prediction of d_out."""
    predict: Callable
    classes: Optional[int] = None


def _block(config, d):
    """(d_out, c): readout.dim and the first of its coordinates,
    readout.coord, for token dimension d."""
    d_out = int(config.get("readout.dim", 1))
    c = int(config.get("readout.coord", d - d_out))
    if c < 0:
        c += d - d_out + 1  # the block of d_out coordinates ends that far from the end
    if d_out < 1 or not 0 <= c <= d - d_out:
        raise ValueError(f"readout.dim {d_out} and readout.coord {c} do not fit d = {d}")
    return d_out, c


def _query_readout(config):
    """Coordinates c..c+d_out-1 of the last token."""
    def predict(X1):
        d_out, c = _block(config, X1.shape[-1])
        return np.array(X1[:, -1, c:c + d_out])
    return Readout(predict)


def _mean_readout(config):
    """W times the mean token. W is readout.weights, this readout's own key,
    (d_out, d) row-major (old files give a vector of length d), or the rows
    e_c..e_{c+d_out-1} when it is absent."""
    def predict(X1):
        d = X1.shape[-1]
        d_out, c = _block(config, d)
        W = np.eye(d)[c:c + d_out]
        weights = config.get("readout.weights")
        if weights is not None and np.size(weights) > 0:
            if np.size(weights) != d_out * d:
                raise ValueError(f"readout.weights has {np.size(weights)} values, not d_out d = {d_out * d}")
            W = np.asarray(weights, dtype=float).reshape(d_out, d)
        return X1.mean(axis=1) @ W.T
    return Readout(predict)


def _next_token_readout(config):
    """MODEL.md §13: the logits of every position t < n are beta (the fixed
    readout.scale) times the first k = data.vocab coordinates of token t,
    position after position: yhat (N, (n - 1) k)."""
    k = int(config["data.vocab"])
    beta = float(config.get("readout.scale", 1.0))

    def predict(X1):
        return beta * np.array(X1[:, :-1, :k]).reshape(X1.shape[0], -1)
    return Readout(predict, classes=k)


# One entry per readout of mft: readout.kind -> entry(config) -> Readout.
READOUTS = {"query": _query_readout, "mean": _mean_readout, "next-token": _next_token_readout}


def readout(config):
    """The configuration's entry of READOUTS (readout.kind)."""
    return _entry(READOUTS, "readout.kind", "query", config)


def predict(X1, config):
    """yhat (N, d_out) by the configuration's readout."""
    return readout(config).predict(X1)


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


class Loss(NamedTuple):
    """A loss of MODEL.md §4 and §10: value(yhat, y) and slope(yhat, y), R
    and N dR/dyhat of yhat (N, d_out) against targets y (N, d_out), each
    summed over the rows; classifies: whether it is a classifier's (its
    runs report accuracy)."""
    value: Callable
    slope: Callable
    classifies: bool = False


# One entry per loss of mft: loss.kind -> entry(config) -> Loss.
LOSSES = {
    # (1/2) |yhat_i - y_i|^2
    "squared": lambda config: Loss(lambda yhat, y: 0.5 * np.sum((yhat - y) ** 2), lambda yhat, y: yhat - y),
    # logsumexp_c yhat_ic - sum_c y_ic yhat_ic
    "cross-entropy": lambda config: Loss(lambda yhat, y: np.sum(logsumexp(yhat) - np.sum(y * yhat, axis=1)),
                                         lambda yhat, y: _softmax_rows(yhat) - y, classifies=True),
}


def loss_function(config):
    """The configuration's entry of LOSSES (loss.kind)."""
    return _entry(LOSSES, "loss.kind", "squared", config)


def classifies(config):
    """Whether the configuration's loss is a classifier's."""
    return loss_function(config).classifies


def prediction_rows(yhat, targets, config):
    """yhat and the targets as rows of one prediction each: (N, d_out), or
    for a readout with several predictions a sequence (N P, d_out / P)."""
    y = as_targets(targets, yhat.shape[1])
    classes = readout(config).classes
    if classes is None:
        return yhat, y
    return yhat.reshape(-1, classes), y.reshape(-1, classes)


def loss(yhat, targets, config):
    """R of predictions yhat (N, d_out) against targets (N, d_out): the
    configuration's loss averaged over the rows of predictions."""
    z, y = prediction_rows(yhat, targets, config)
    return loss_function(config).value(z, y) / y.shape[0]


def share_correct(yhat, targets, config=None):
    """The share of rows i with argmax_c yhat_ic == argmax_c y_ic (first
    maximum on ties); rows of predictions as the configuration's readout
    makes them."""
    yhat, y = prediction_rows(yhat, targets, config or {})
    hits = int(np.count_nonzero(np.argmax(yhat, axis=1) == np.argmax(y, axis=1)))
    return hits / y.shape[0]


def risk(X0, targets, particles, config):
    """R of the data (X0 (N, n, d), targets (N, d_out)) with the loss of config."""
    yhat = predict(forward(X0, particles, config), config)
    return loss(yhat, targets, config)


def accuracy(X0, targets, particles, config):
    """The share of sequences whose predicted class (argmax of yhat) is the target's."""
    return share_correct(predict(forward(X0, particles, config), config), targets, config)


def evaluate(X0, targets, particles, config):
    """(R, accuracy) from one forward pass."""
    yhat = predict(forward(X0, particles, config), config)
    return loss(yhat, targets, config), share_correct(yhat, targets, config)


# --- forward-mode derivative: the directional derivative of R ---------------
# Exact for kinked score maps (relu) and the relu MLP as well (the derivative
# of max(a, 0) taken as 1[a > 0], as the adjoint takes it), where finite
# differences of a large model cross kinks for any step.

def attention_field_jvp(X, dX, Q, K, V, dQ, dK, dV, attention):
    """(F, dF): the attention field and its derivative along (dX, dQ, dK, dV)."""
    qx = np.einsum("mhd,ind->imnh", Q, X)
    kx = np.einsum("mhd,ind->imnh", K, X)
    dqx = np.einsum("mhd,ind->imnh", dQ, X) + np.einsum("mhd,ind->imnh", Q, dX)
    dkx = np.einsum("mhd,ind->imnh", dK, X) + np.einsum("mhd,ind->imnh", K, dX)
    s = np.einsum("imah,imbh->imab", qx, kx)
    ds = np.einsum("imah,imbh->imab", dqx, kx) + np.einsum("imah,imbh->imab", qx, dkx)
    p, dp = attention.weights_jvp(s, ds)
    y = np.einsum("imab,ibd->imad", p, X)
    dy = np.einsum("imab,ibd->imad", dp, X) + np.einsum("imab,ibd->imad", p, dX)
    M = Q.shape[0]
    F = np.einsum("mkd,imad->iak", V, y) / M
    dF = (np.einsum("mkd,imad->iak", dV, y) + np.einsum("mkd,imad->iak", V, dy)) / M
    return F, dF


def mlp_field_jvp(X, dX, W1, W2, dW1, dW2, act):
    z = np.einsum("mfd,ind->imnf", W1, X)
    dz = np.einsum("mfd,ind->imnf", dW1, X) + np.einsum("mfd,ind->imnf", W1, dX)
    h, dh = act.value(z), act.slope(z) * dz
    Mf = W1.shape[0]
    F = np.einsum("mkf,imnf->ink", W2, h) / Mf
    dF = (np.einsum("mkf,imnf->ink", dW2, h) + np.einsum("mkf,imnf->ink", W2, dh)) / Mf
    return F, dF


def field_jvp(X, dX, particles, direction, l, species, norm):
    """(Pi F_l, d(Pi F_l)) along (dX, the direction's slice l): the mean
    over the species of their fields and derivatives, under the token norm."""
    parts = [s.field_jvp(X, dX, _slice_of(particles, s, l), _slice_of(direction, s, l)) for s in species]
    F = _species_mean([F for F, _ in parts])
    dF = _species_mean([dF for _, dF in parts])
    return norm.project_jvp(X, dX, F, dF)


def directional_derivative(X0, targets, particles, config, direction):
    """(R, dR/dtheta . u) for the direction u (a dict like the particles),
    by forward-mode differentiation through the same RK scheme."""
    species, norm = particle_species(config, particles), token_norm(config)
    X0 = norm.initial(np.asarray(X0, dtype=float))  # the tokens do not move with theta
    X, dX = integrate((X0, np.zeros_like(X0)), slices(species, particles), config,
                      lambda l, Y: field_jvp(Y[0], Y[1], particles, direction, l, species, norm))
    yhat, dyhat = predict(X, config), predict(dX, config)  # the readout is linear
    z, y = prediction_rows(yhat, targets, config)
    slope = loss_function(config).slope(z, y) / y.shape[0]
    return loss(yhat, targets, config), float(np.sum(slope * dyhat.reshape(z.shape)))

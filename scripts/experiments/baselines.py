"""Baselines the experiment drivers compare the trained transformer with.

Data conventions: tokens is an array (N, n, d), targets (N, d_out). In the
in-context linear-regression task ("icl-linear"), p = d - d_out; token j < n-1
is (x_j, y_j) with x_j the first p coordinates and y_j = W x_j the last d_out;
the last token is the query (x_q, 0) and the target is W x_q (W drawn anew
for each sequence).

Risks are 1/2 times the mean over sequences of the squared Euclidean error,
the normalisation of the model's risk.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
import numpy as np


def zero_risk(targets):
    """1/2 mean_i |y_i|^2: the risk of predicting zero."""
    y = np.asarray(targets, float).reshape(len(targets), -1)
    return 0.5 * float(np.mean(np.sum(y**2, axis=1)))


def squared_risk(pred, targets):
    """1/2 mean_i |pred_i - y_i|^2."""
    y = np.asarray(targets, float).reshape(len(targets), -1)
    e = np.asarray(pred, float).reshape(y.shape) - y
    return 0.5 * float(np.mean(np.sum(e**2, axis=1)))


def _icl_split(tokens, d_out):
    """(x context (N, n-1, p), y context (N, n-1, d_out), x query (N, p))."""
    t = np.asarray(tokens, float)
    if t.ndim != 3 or not 0 < d_out < t.shape[2] or t.shape[1] < 2:
        raise ValueError(f"tokens of shape {t.shape} do not hold an icl task with d_out = {d_out}")
    p = t.shape[2] - d_out
    return t[:, :-1, :p], t[:, :-1, p:], t[:, -1, :p]


def icl_least_squares(tokens, d_out):
    """Predictions (N, d_out): on each sequence, the minimum-norm least-squares
    W fitted on the n-1 context pairs, applied to the query x_q."""
    x, y, xq = _icl_split(tokens, d_out)
    # pinv of each (n-1, p) context matrix: the minimum-norm solution, also
    # when n-1 < p or the context is rank deficient.
    wt = np.linalg.pinv(x) @ y  # (N, p, d_out): W transposed
    return np.einsum("np,npo->no", xq, wt)


def icl_one_step_gd(tokens, d_out, eta):
    """Predictions (N, d_out) eta (1/(n-1)) sum_j (x_j . x_q) y_j: one gradient
    step of size eta from W = 0 on the context's loss 1/(2(n-1)) sum_j
    |W x_j - y_j|^2 (the estimator one linear-attention layer represents)."""
    x, y, xq = _icl_split(tokens, d_out)
    return eta * np.einsum("njp,np,njo->no", x, xq, y) / x.shape[1]


def fit_one_step_eta(tokens, targets, d_out):
    """The eta minimising squared_risk(icl_one_step_gd(tokens, d_out, eta),
    targets): <a, y> / <a, a> with a the predictions at eta = 1."""
    a = icl_one_step_gd(tokens, d_out, 1.0)
    y = np.asarray(targets, float).reshape(a.shape)
    aa = float(np.sum(a * a))
    if aa == 0.0:
        raise ValueError("the one-step predictions are all zero; eta is undetermined")
    return float(np.sum(a * y)) / aa


def tokens_as_features(tokens):
    """(N, n, d) -> (N, n d), each sequence's tokens one after the other."""
    t = np.asarray(tokens, float)
    return t.reshape(t.shape[0], -1)


def _labels(labels):
    """Integer class indices from indices (N,) or (N, 1), or one-hot (N, C)."""
    c = np.asarray(labels)
    if c.ndim == 2 and c.shape[1] > 1:
        return np.argmax(c, axis=1)
    c = c.reshape(len(c))
    if np.issubdtype(c.dtype, np.floating):
        if not np.all(c == np.round(c)):
            raise ValueError("class labels must be integers or one-hot rows")
        c = c.astype(int)
    return c


def _features(X):
    X = np.asarray(X, float)
    return X.reshape(X.shape[0], -1)


def logistic_regression_accuracy(train_X, train_y, test_X, test_y):
    """Held-out accuracy of multinomial logistic regression (lbfgs, C = 1,
    up to 5000 iterations) on the flattened features."""
    import sklearn
    from sklearn.linear_model import LogisticRegression
    options = dict(solver="lbfgs", C=1.0, max_iter=5000)
    major, minor = (int(v) for v in sklearn.__version__.split(".")[:2])
    if (major, minor) < (1, 5):  # multinomial is the only behaviour from 1.5 on
        options["multi_class"] = "multinomial"
    model = LogisticRegression(**options).fit(_features(train_X), _labels(train_y))
    return float(np.mean(model.predict(_features(test_X)) == _labels(test_y)))


def nearest_centroid_accuracy(train_X, train_y, test_X, test_y):
    """Held-out accuracy of the nearest class mean (Euclidean) on the
    flattened features."""
    X, c = _features(train_X), _labels(train_y)
    classes = np.unique(c)
    centroids = np.stack([X[c == k].mean(axis=0) for k in classes])
    T = _features(test_X)
    d2 = np.sum((T[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    return float(np.mean(classes[np.argmin(d2, axis=1)] == _labels(test_y)))


def in_context_predictors(symbols, k, alpha):
    """The in-context unigram and bigram predictors of every position of
    sequences of symbols 0..k-1 (N, n): two arrays (N, n - 1, k), row t the
    law of symbol t + 1 given symbols 0..t. Unigram: (count of j + 1) /
    (t + 1 + k); bigram: (count of the transitions s_t -> j + alpha) /
    (count of s_t -> any + k alpha), the transitions seen in symbols 0..t
    (the Bayes predictor for Dirichlet(alpha) rows). mft computes their mean
    cross-entropies as its baselines; this is the per-position form."""
    s = np.asarray(symbols)
    if s.ndim != 2 or s.shape[1] < 2 or s.min() < 0 or s.max() >= k:
        raise ValueError(f"symbols of shape {s.shape} with values in [{s.min()}, {s.max()}] are not sequences of "
                         f"symbols 0..{k - 1}")
    N, n = s.shape
    onehot = np.eye(k)[s]                                         # (N, n, k)
    seen = np.cumsum(onehot, axis=1)[:, :-1]                      # counts of symbols 0..t, t < n - 1
    unigram = (seen + 1.0) / (np.arange(1, n)[None, :, None] + k)
    pairs = np.einsum("nti,ntj->ntij", onehot[:, :-1], onehot[:, 1:])   # transition u -> u + 1
    counts = np.concatenate([np.zeros((N, 1, k, k)), np.cumsum(pairs, axis=1)[:, :-1]], axis=1)  # seen in 0..t
    rows = counts[np.arange(N)[:, None], np.arange(n - 1)[None, :], s[:, :-1]]   # (N, n - 1, k): from s_t
    bigram = (rows + alpha) / (rows.sum(axis=2, keepdims=True) + k * alpha)
    return unigram, bigram


def mean_cross_entropy(prob, symbols):
    """-log prob of the next symbol, averaged over sequences and positions
    (prob (N, n - 1, k) as in_context_predictors gives it)."""
    s = np.asarray(symbols)
    p = np.take_along_axis(np.asarray(prob, float), s[:, 1:, None], axis=2)[..., 0]
    return float(-np.mean(np.log(p)))


def mean_kl(p, q):
    """KL(p || q) of laws over the last axis, averaged over the others."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    return float(np.mean(np.sum(p * (np.log(p) - np.log(q)), axis=-1)))


def path_min_kl(target, end, points=401):
    """min over lambda in [0, 1] of mean_kl(target, q_lambda), q_lambda =
    end^lambda normalised: the geometric path from the uniform law
    (lambda = 0) to `end` (lambda = 1), on a grid of `points`; returns
    (the minimum, its lambda)."""
    log_end = np.log(np.asarray(end, float))
    best = (np.inf, 0.0)
    for lam in np.linspace(0.0, 1.0, points):
        z = lam * log_end
        q = np.exp(z - z.max(axis=-1, keepdims=True))
        best = min(best, (mean_kl(target, q / q.sum(axis=-1, keepdims=True)), float(lam)))
    return best

"""A training run's history and where it ended: the rule every driver
that trains states before its runs (docs/EXPERIMENTS.md, "Ended means
reached"), tested on histories with known endings in
tests/experiments/test_baselines.py."""
import numpy as np

import chosen_python  # noqa: F401  (first: the package mft on sys.path, a checkout or an installation)
from mft import io as mft_io  # noqa: E402


def history(path):
    """(history, configuration) of the run file `path`, closed after reading
    even when a dataset cannot be read."""
    with mft_io.open_run(str(path)) as run:
        return run.history, run.config


def seed_histories(paths, names):
    """The histories of the runs `names` (a model's seeds, in order) that did
    not diverge, and how many did: ([history, ...], diverged)."""
    found = [history(paths[name])[0] for name in names if name in paths]
    return found, len(names) - len(found)


# Where a training run ends (the rule the drivers state before their runs).
# First whether it reached what the theory speaks of: an interpolating run
# never plateaus (on the squared loss it falls toward R = 0 at [B]'s linear
# rate; under the cross-entropy on separable data like 1/tau, its logits
# growing without end), so it has ended when
#   interpolated: R <= INTERPOLATED R(0), or
#   separated: at least SEPARATED_FRACTION of the training set is classified
#     with a logit margin (its class's logit minus the largest other) of at
#     least SEPARATED_MARGIN (log 9: the class 9 times as likely as any
#     other), from the logits of a forward pass at the run's end.
# Otherwise R's relative change c over the run's last fifth, from the line
# fitted to log R against tau there (a fitted change, not two end points, so
# that one noisy row does not decide): a plateau when |c| < PLATEAU, else
# still falling or rising.
PLATEAU = 0.05
INTERPOLATED = 1e-10
SEPARATED_FRACTION, SEPARATED_MARGIN = 0.99, float(np.log(9.0))
ENDINGS = ("plateau", "still falling", "rising", "unmeasured", "interpolated", "separated")


def margin_fraction(logits, labels, margin=SEPARATED_MARGIN):
    """The fraction of examples whose class's logit exceeds every other
    class's by at least `margin` (labels: class indices, or one-hot rows)."""
    logits = np.asarray(logits, float)
    labels = np.asarray(labels)
    if labels.ndim == 2:
        labels = np.argmax(labels, axis=1)
    rows = np.arange(logits.shape[0])
    own = logits[rows, labels]
    others = logits.copy()
    others[rows, labels] = -np.inf
    return float(np.mean(own - others.max(axis=1) >= margin))


def reached(history, logits=None, labels=None):
    """"interpolated", "separated" or None: whether a run reached the end
    the theory speaks of (the rule above); logits and labels: the training
    set's, at the run's end (a classifier)."""
    risk = np.asarray(history["risk"], float)
    if risk.size >= 2 and risk[0] > 0 and np.isfinite(risk[-1]) and risk[-1] <= INTERPOLATED * risk[0]:
        return ENDINGS[4]
    if logits is not None and margin_fraction(logits, labels) >= SEPARATED_FRACTION:
        return ENDINGS[5]
    return None


def change(history, start):
    """R's relative change over tau >= start from the line fitted to log R:
    exp(slope span) - 1 (NaN with fewer than two rows or a risk <= 0)."""
    tau, risk = np.asarray(history["tau"], float), np.asarray(history["risk"], float)
    keep = tau >= start - 1e-12
    if keep.sum() < 2 or np.any(risk[keep] <= 0):
        return np.nan
    slope = np.polyfit(tau[keep], np.log(risk[keep]), 1)[0]
    return float(np.expm1(slope * (tau[keep][-1] - tau[keep][0])))


def last_fifth(history):
    """The tau where a run's last fifth (in steps) begins."""
    step = np.asarray(history["step"])
    return float(np.asarray(history["tau"])[np.searchsorted(step, 0.8 * step[-1])])


def ending(c, threshold=PLATEAU):
    """The ending of a run whose relative change over its end is c."""
    if not np.isfinite(c):
        return ENDINGS[3]
    return ENDINGS[0] if abs(c) < threshold else ENDINGS[1] if c < 0 else ENDINGS[2]


def run_ending(history, threshold=PLATEAU, logits=None, labels=None):
    """The ending of a run: the end it reached, else its change over its
    last fifth."""
    return reached(history, logits, labels) or ending(change(history, last_fifth(history)), threshold)


def endings_text(ends):
    """"2 plateau; 1 still falling": how many runs end each way."""
    return "; ".join(f"{ends.count(e)} {e}" for e in ENDINGS if ends.count(e)) or "none"

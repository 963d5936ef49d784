"""The statistics every criterion quotes, in one place (tested on synthetic
data with known answers in tests/experiments/test_stats.py).

Every interval here is a Student-t interval with its degrees of freedom
stated, never "2 SE": with 3 seeds, mean +- 2 SE covers the truth 82 % of
the time, with 2 seeds 70 %. The designs they serve:

  t_interval(values)          independent replicates (one number a seed)
  per_seed_slopes(x, Y)       a nested design: a curve per seed (the widths
                              of one seed share its draws), one fitted slope
                              per seed, the t-interval over seeds
  per_seed_fits(x, Y, model)  the same for any linear model (c + b M^-1/2,
                              a/L + b): one coefficient vector per seed
  paired(a, b)                a paired design (the same seeds or data under
                              two treatments): the t-interval of a - b
  line(x, y)                  one least-squares line with a t-interval on
                              n - 2 dof (points that are independent)
  validation_split(n, ...)    disjoint index sets: choose on one, judge on
                              the other
  Plan(name, band, spread, pilot_seeds, seeds)
                              the power of an equivalence or bound criterion
                              before its run: the half-width its seeds will
                              give against its band (a `plan:` line)

An Interval prints as `-0.441 [-0.553, -0.329] (95 % t, 2 dof)`; a
criterion line quotes that text, so its level and dof are on the line.
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
from dataclasses import dataclass

import numpy as np
from scipy import stats as _scipy_stats

LEVEL = 0.95


def t_quantile(level, dof):
    """The two-sided Student-t quantile: P(|T_dof| <= q) = level."""
    if dof < 1:
        raise ValueError(f"a t-interval needs at least one degree of freedom, got {dof}")
    if not 0 < level < 1:
        raise ValueError(f"a confidence level lies in (0, 1), got {level}")
    return float(_scipy_stats.t.ppf(0.5 + level / 2, dof))


@dataclass
class Interval:
    """An estimate with its standard error and the two-sided t-interval."""
    value: float
    error: float      # standard error
    dof: int
    level: float
    low: float
    high: float

    @classmethod
    def from_error(cls, value, error, dof, level=LEVEL):
        q = t_quantile(level, dof)
        return cls(float(value), float(error), int(dof), float(level), float(value - q * error),
                   float(value + q * error))

    @property
    def half_width(self):
        return (self.high - self.low) / 2

    def contains(self, x):
        return self.low <= x <= self.high

    def above(self, x):
        """The whole interval lies above x."""
        return self.low > x

    def below(self, x):
        return self.high < x

    def label(self):
        return f"{100 * self.level:g} % t, {self.dof} dof"

    def text(self, digits=3):
        f = f"{{:.{digits}g}}"
        return f"{f.format(self.value)} [{f.format(self.low)}, {f.format(self.high)}] ({self.label()})"

    def t_statistic(self, null=0.0):
        return (self.value - null) / self.error if self.error > 0 else float("inf") * np.sign(self.value - null)

    def p_value(self, null=0.0):
        """Two-sided p-value of value = null."""
        t = self.t_statistic(null)
        return float(2 * _scipy_stats.t.sf(abs(t), self.dof))


def t_interval(values, level=LEVEL):
    """The mean of independent replicates with its t-interval on n - 1 dof."""
    v = np.asarray(values, float).ravel()
    if v.size < 2:
        raise ValueError(f"a t-interval needs at least two replicates, got {v.size}")
    if not np.all(np.isfinite(v)):
        raise ValueError("a t-interval needs finite replicates")
    return Interval.from_error(v.mean(), v.std(ddof=1) / np.sqrt(v.size), v.size - 1, level)


def finite_interval(values, level=LEVEL):
    """The t-interval of the finite values (a diverged seed's NaN left out),
    or None with fewer than two."""
    v = [x for x in np.asarray(values, float).ravel() if np.isfinite(x)]
    return t_interval(v, level) if len(v) >= 2 else None


def paired(a, b, level=LEVEL):
    """The mean of the paired differences a - b (a[i], b[i] the same seed or
    data under two treatments) with its t-interval on n - 1 dof."""
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    if a.size != b.size:
        raise ValueError(f"a paired comparison needs pairs, got {a.size} and {b.size} values")
    return t_interval(a - b, level)


def planned_half_width(spread, seeds, level=LEVEL):
    """The half-width a t-interval over `seeds` replicates will have when
    their standard deviation is `spread` (a pilot's estimate):
    t_{(1 + level)/2, seeds - 1} spread / sqrt(seeds)."""
    if int(seeds) != seeds or seeds < 2:
        raise ValueError(f"a planned interval needs at least two seeds, got {seeds}")
    if not (np.isfinite(spread) and spread >= 0):
        raise ValueError(f"a pilot's spread must be finite and not negative, got {spread}")
    return float(t_quantile(level, int(seeds) - 1) * spread / np.sqrt(seeds))


def seeds_needed(spread, band, level=LEVEL, most=10_000):
    """The fewest seeds whose planned half-width is at most `band` (None
    beyond `most`)."""
    for n in range(2, most + 1):
        if planned_half_width(spread, n, level) <= band:
            return n
    return None


@dataclass
class Plan:
    """The power of one equivalence or bound criterion, stated before its
    run: the band its interval must fall within (an equivalence's +-band,
    a bound's distance from the value the pilot expects), the seeds' spread
    a pilot measured (its runs excluded from the verdict) and the seeds the
    design will run. Its `line()` goes into the criteria file, where
    preregistration.py --check refuses a half-width above the band."""
    name: str
    band: float
    spread: float
    pilot_seeds: int
    seeds: int
    level: float = LEVEL

    @property
    def half_width(self):
        return planned_half_width(self.spread, self.seeds, self.level)

    @property
    def fits(self):
        return self.half_width <= self.band

    def line(self):
        """`plan: NAME: band B; pilot spread S over P seeds (excluded); N
        seeds give a half-width of H (95 % t, N - 1 dof): within the band`
        (or `exceeds the band: K seeds needed`)."""
        verdict = "within the band" if self.fits else \
            f"exceeds the band: {seeds_needed(self.spread, self.band, self.level) or 'over 10000'} seeds needed"
        return (f"plan: {self.name}: band {self.band:.6g}; pilot spread {self.spread:.6g} over {self.pilot_seeds} "
                f"seeds (excluded from the verdict); {self.seeds} seeds give a half-width of {self.half_width:.6g} "
                f"({round(100 * self.level)} % t, {self.seeds - 1} dof): {verdict}")


@dataclass
class LineFit:
    slope: Interval
    intercept: Interval
    points: int


def _least_squares(A, y):
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    dof = A.shape[0] - A.shape[1]
    residual = y - A @ coef
    sigma2 = residual @ residual / dof if dof > 0 else 0.0
    cov = sigma2 * np.linalg.inv(A.T @ A)
    return coef, np.sqrt(np.diag(cov)), dof


def least_squares_line(x, y, points=2):
    """y = a + b x by least squares from at least `points` points:
    ([a, b], their standard errors (0 without residual dof), dof)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.size != y.size or x.size < points:
        raise ValueError(f"a line needs at least {points} points of equal count, got {x.size} and {y.size}")
    if np.ptp(x) == 0:
        raise ValueError("a line needs two distinct abscissae")
    return _least_squares(np.column_stack([np.ones_like(x), x]), y)


def line(x, y, level=LEVEL):
    """y = intercept + slope x by least squares, with t-intervals on n - 2
    dof: for points that are independent of each other (not the widths of
    one seed: per_seed_slopes)."""
    coef, err, dof = least_squares_line(x, y, points=3)
    return LineFit(Interval.from_error(coef[1], err[1], dof, level), Interval.from_error(coef[0], err[0], dof, level),
                   int(np.size(x)))


@dataclass
class PerSeedFit:
    """Coefficients fitted seed by seed, and over seeds: `estimates` has one
    row per seed; `intervals[j]` is the t-interval of coefficient j over the
    seeds (seeds - 1 dof)."""
    estimates: np.ndarray
    intervals: list
    names: tuple

    def __getitem__(self, name):
        return self.intervals[self.names.index(name)]

    @property
    def seeds(self):
        return self.estimates.shape[0]


def per_seed_fits(columns, Y, names, level=LEVEL):
    """Fits Y[s] = sum_j c_j columns[j] for every seed s (a row of Y) by least
    squares and gives each coefficient's t-interval over the seeds. The
    columns are the design (e.g. [1, M^-1/2]); a seed's points are nested in
    it (they share its draws), so its fit is one replicate."""
    A = np.column_stack([np.asarray(c, float) for c in columns])
    Y = np.atleast_2d(np.asarray(Y, float))
    if Y.shape[1] != A.shape[0]:
        raise ValueError(f"each seed needs {A.shape[0]} points, got {Y.shape[1]}")
    if Y.shape[0] < 2:
        raise ValueError(f"per-seed fits need at least two seeds, got {Y.shape[0]}")
    if A.shape[0] < A.shape[1]:
        raise ValueError(f"{A.shape[1]} coefficients need at least as many points, got {A.shape[0]}")
    estimates = np.array([np.linalg.lstsq(A, row, rcond=None)[0] for row in Y])
    return PerSeedFit(estimates, [t_interval(estimates[:, j], level) for j in range(A.shape[1])], tuple(names))


def per_seed_slopes(x, Y, level=LEVEL):
    """The log-log slope of each seed's curve Y[s] against x (all positive),
    and its t-interval over the seeds: the fit for a nested design."""
    x, Y = np.asarray(x, float), np.atleast_2d(np.asarray(Y, float))
    if np.any(x <= 0) or np.any(Y <= 0):
        raise ValueError("a power law needs positive x and y")
    fit = per_seed_fits([np.ones_like(x), np.log(x)], np.log(Y), ("log_prefactor", "slope"), level)
    return fit


def validation_split(n, fraction=0.5, seed=0):
    """Two disjoint sorted index sets of range(n), `fraction` of them in the
    first (the validation set that chooses) and the rest in the second (the
    set that judges what was chosen); the same for the same seed."""
    if n < 2:
        raise ValueError(f"a split needs at least two items, got {n}")
    order = np.random.default_rng(seed).permutation(n)
    cut = min(n - 1, max(1, int(round(fraction * n))))
    return np.sort(order[:cut]), np.sort(order[cut:])


def best_on_validation(validation_scores):
    """The key of the lowest validation score ({key: score}); the held-out
    score of what it picks is reported by the caller, never used to pick."""
    if not validation_scores:
        raise ValueError("no candidates to choose from")
    finite = {k: v for k, v in validation_scores.items() if np.isfinite(v)}
    if not finite:
        raise ValueError("no candidate has a finite validation score")
    return min(finite, key=finite.get)

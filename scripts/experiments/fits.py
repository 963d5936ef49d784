"""The fits the experiments quote, with their uncertainties (ordinary least
squares; tests/experiments/test_fits.py checks them on synthetic data).

  power_law(x, y)            y = c x^slope: slope, its standard error, c
  exponential_rate(t, y)     y = c exp(-rate t): rate, its standard error, c
"""
from dataclasses import dataclass

import numpy as np


@dataclass
class Fit:
    value: float   # the slope or the rate
    error: float   # its standard error (0 with two points)
    prefactor: float
    points: int


def _line(u, v):
    """Least-squares line v = a + b u: (b, standard error of b, a)."""
    u, v = np.asarray(u, float), np.asarray(v, float)
    if u.size != v.size or u.size < 2:
        raise ValueError(f"a line needs at least two points of equal count, got {u.size} and {v.size}")
    if np.ptp(u) == 0:
        raise ValueError("a line needs two distinct abscissae")
    A = np.column_stack([np.ones_like(u), u])
    coef, *_ = np.linalg.lstsq(A, v, rcond=None)
    a, b = coef
    dof = u.size - 2
    if dof == 0:
        return b, 0.0, a
    residual = v - A @ coef
    sigma2 = residual @ residual / dof
    cov = sigma2 * np.linalg.inv(A.T @ A)
    return b, float(np.sqrt(cov[1, 1])), a


def power_law(x, y):
    """Fits y = c x^slope on log-log axes (all x, y > 0)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("a power law needs positive x and y")
    b, err, a = _line(np.log(x), np.log(y))
    return Fit(float(b), err, float(np.exp(a)), int(x.size))


def exponential_rate(t, y):
    """Fits y = c exp(-rate t) on semi-log axes (all y > 0)."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    if np.any(y <= 0):
        raise ValueError("an exponential rate needs positive y")
    b, err, a = _line(t, np.log(y))
    return Fit(float(-b), err, float(np.exp(a)), int(t.size))


def early_window(t, y, drop=1e-2):
    """The indices of the early phase of a decaying curve: from the start
    until y first falls below drop * y[0] (at least three points)."""
    y = np.asarray(y, float)
    below = np.flatnonzero(y < drop * y[0])
    end = int(below[0]) if below.size else y.size
    return np.arange(max(3, min(end, y.size)))

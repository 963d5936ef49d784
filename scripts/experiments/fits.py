"""The fits the experiments quote, with their uncertainties (ordinary least
squares; tests/experiments/test_fits.py checks them on synthetic data).

  power_law(x, y)            y = c x^slope: slope, its standard error, c
  weighted_power_law(x, y, e)  the same with the standard errors e of y
                             (weighted least squares): slope, its standard
                             error from e, chi^2 on its degrees of freedom,
                             and the log-log curvature with its error
"""
import chosen_python  # noqa: F401  (first: a python3 without numpy, h5py runs this under MFT_PYTHON)
from dataclasses import dataclass

import numpy as np

import stats


@dataclass
class Fit:
    value: float   # the slope
    error: float   # its standard error (0 with two points)
    prefactor: float
    points: int


def _line(u, v):
    """Least-squares line v = a + b u: (b, standard error of b, a)."""
    coef, err, _ = stats.least_squares_line(u, v, points=2)
    return coef[1], float(err[1]), coef[0]


def power_law(x, y):
    """Fits y = c x^slope on log-log axes (all x, y > 0)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("a power law needs positive x and y")
    b, err, a = _line(np.log(x), np.log(y))
    return Fit(float(b), err, float(np.exp(a)), int(x.size))


@dataclass
class WeightedFit:
    value: float      # the slope
    error: float      # its standard error, from the errors of y
    prefactor: float
    points: int
    chi2: float       # of the line, on points - 2 degrees of freedom
    curvature: float  # the quadratic coefficient of a parabola in log x (0 on a power law)
    curvature_error: float

    @property
    def dof(self):
        return self.points - 2


def _weighted_polynomial(u, v, w, degree):
    A = np.vander(u, degree + 1, increasing=True) * w[:, None]
    coef, *_ = np.linalg.lstsq(A, v * w, rcond=None)
    cov = np.linalg.inv(A.T @ A)
    chi2 = float(np.sum((A @ coef - v * w) ** 2))
    return coef, cov, chi2


def weighted_power_law(x, y, yerr):
    """Fits y = c x^slope on log-log axes with the standard errors yerr of y
    (the error of log y is yerr / y); needs three points, four for the
    curvature's error."""
    x, y, e = (np.asarray(a, float) for a in (x, y, yerr))
    if x.size < 3 or np.any(x <= 0) or np.any(y <= 0) or np.any(e <= 0):
        raise ValueError("a weighted power law needs three or more points with positive x, y and errors")
    u, v, w = np.log(x), np.log(y), y / e
    coef, cov, chi2 = _weighted_polynomial(u, v, w, 1)
    curvature, curvature_error = float("nan"), float("nan")
    if x.size >= 4:
        c2, cov2, _ = _weighted_polynomial(u - u.mean(), v, w, 2)
        curvature, curvature_error = float(c2[2]), float(np.sqrt(cov2[2, 2]))
    return WeightedFit(float(coef[1]), float(np.sqrt(cov[1, 1])), float(np.exp(coef[0])), int(x.size), chi2,
                       curvature, curvature_error)

"""The experiments' fits on synthetic data with known answers."""
import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "experiments"))
import fits  # noqa: E402


class PowerLaw(unittest.TestCase):
    def test_exact_data_give_the_exponent(self):
        x = np.array([1, 2, 4, 8, 16, 32.0])
        f = fits.power_law(x, 3.0 * x**-0.5)
        self.assertAlmostEqual(f.value, -0.5, places=12)
        self.assertAlmostEqual(f.prefactor, 3.0, places=12)
        self.assertLess(f.error, 1e-12)
        self.assertEqual(f.points, 6)

    def test_the_error_covers_the_truth_at_its_rate(self):
        # Log-normal noise of known size: the true slope lies within two
        # standard errors in about 95 % of the draws, and the mean error
        # matches the spread of the fitted slopes.
        rng = np.random.default_rng(3)
        x = np.geomspace(1, 64, 7)
        slopes, errors, inside = [], [], 0
        for _ in range(2000):
            y = 0.7 * x**-0.5 * np.exp(0.1 * rng.standard_normal(x.size))
            f = fits.power_law(x, y)
            slopes.append(f.value)
            errors.append(f.error)
            inside += abs(f.value + 0.5) < 2 * f.error
        self.assertAlmostEqual(np.mean(slopes), -0.5, delta=0.005)
        self.assertGreater(inside / 2000, 0.90)
        self.assertLess(inside / 2000, 0.99)
        self.assertAlmostEqual(np.mean(errors) / np.std(slopes), 1.0, delta=0.15)

    def test_bad_input_is_refused(self):
        with self.assertRaises(ValueError):
            fits.power_law([1, 2], [1, -1])
        with self.assertRaises(ValueError):
            fits.power_law([2, 2, 2], [1, 2, 3])


class WeightedPowerLaw(unittest.TestCase):
    def test_exact_power_law(self):
        x = np.array([4.0, 8, 16, 32, 64])
        f = fits.weighted_power_law(x, 3 * x**-0.5, 0.01 * x**-0.5)
        self.assertAlmostEqual(f.value, -0.5, places=10)
        self.assertAlmostEqual(f.prefactor, 3.0, places=10)
        self.assertLess(f.chi2, 1e-15)
        self.assertAlmostEqual(f.curvature, 0.0, places=10)

    def test_errors_and_chi2_match_their_law(self):
        # Gaussian noise of known size: the slope lies within its error about
        # as often as it should, and chi^2 averages its degrees of freedom.
        rng = np.random.default_rng(11)
        x = np.array([4.0, 8, 16, 32, 64, 128])
        within, chi2 = 0, []
        for _ in range(2000):
            e = 0.03 * x**-0.5
            f = fits.weighted_power_law(x, x**-0.5 + e * rng.standard_normal(x.size), e)
            within += abs(f.value + 0.5) < f.error
            chi2.append(f.chi2)
        self.assertLess(abs(within / 2000 - 0.683), 0.04)
        self.assertLess(abs(np.mean(chi2) - 4), 0.3)

    def test_curvature_is_seen(self):
        x = np.array([1.0, 2, 4, 8, 16, 32])
        y = (x + 4) ** -0.5  # steepens towards -0.5
        f = fits.weighted_power_law(x, y, 1e-4 * y)
        self.assertLess(f.curvature, 0)
        self.assertGreater(abs(f.curvature), 10 * f.curvature_error)
        self.assertGreater(f.chi2, 100)

    def test_bad_input_is_refused(self):
        with self.assertRaises(ValueError):
            fits.weighted_power_law([1, 2], [1, 1], [0.1, 0.1])
        with self.assertRaises(ValueError):
            fits.weighted_power_law([1, 2, 3], [1, 1, 1], [0.1, 0, 0.1])


if __name__ == "__main__":
    unittest.main()

"""The experiments' statistics on synthetic data with known answers: each
interval covers the truth at its stated level, the nested fit where the
pooled one does not, the paired test where the unpaired one cannot."""
import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "experiments"))
import fits  # noqa: E402
import stats  # noqa: E402

DRAWS = 4000


class Quantiles(unittest.TestCase):
    def test_known_values(self):
        # Tables of Student's t: 12.706 (1 dof), 4.303 (2), 2.776 (4), 2.262 (9); the normal's 1.960.
        for dof, q in ((1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (10**6, 1.960)):
            self.assertAlmostEqual(stats.t_quantile(0.95, dof), q, places=3)

    def test_bad_input_is_refused(self):
        for level, dof in ((0.95, 0), (1.0, 3), (0.0, 3)):
            with self.assertRaises(ValueError):
                stats.t_quantile(level, dof)
        with self.assertRaises(ValueError):
            stats.t_interval([1.0])
        with self.assertRaises(ValueError):
            stats.t_interval([1.0, np.nan])


class Power(unittest.TestCase):
    def test_planned_half_width_is_the_intervals(self):
        # t_{0.975, 4} / sqrt(5) = 2.7764451 / 2.2360680 = 1.2416640 for a spread of 1.
        self.assertAlmostEqual(stats.planned_half_width(1.0, 5), 1.2416640, places=6)
        self.assertAlmostEqual(stats.planned_half_width(0.3, 5), 0.3 * 1.2416640, places=6)
        # the half-width the plan predicts is the one a t-interval of those seeds has, on average over draws
        rng = np.random.default_rng(5)
        sigma, n = 0.2, 6
        widths = [stats.t_interval(rng.normal(0, sigma, n)).half_width for _ in range(DRAWS)]
        # E[s] = c4 sigma (c4 = 0.9515 at n = 6): the plan with the true spread is c4 times wider on average
        self.assertAlmostEqual(np.mean(widths) / stats.planned_half_width(sigma, n), 0.9515, delta=0.01)

    def test_seeds_needed_and_the_plan_line(self):
        # [B]'s sec. 5 case: a spread of 0.17 against +-log 1.05 = 0.0488 needs 50 seeds, 5 give 0.211.
        self.assertEqual(stats.seeds_needed(0.17, 0.0488), 50)
        self.assertLessEqual(stats.planned_half_width(0.17, 50), 0.0488)
        self.assertGreater(stats.planned_half_width(0.17, 49), 0.0488)
        plan = stats.Plan("equivalence within +-log 1.05", 0.0488, 0.17, 2, 5)
        self.assertFalse(plan.fits)
        self.assertEqual(plan.line(), "plan: equivalence within +-log 1.05: band 0.0488; pilot spread 0.17 over 2 "
                                      "seeds (excluded from the verdict); 5 seeds give a half-width of 0.211083 "
                                      "(95 % t, 4 dof): exceeds the band: 50 seeds needed")
        self.assertTrue(stats.Plan("a bound", 0.2, 0.1, 2, 5).fits)
        for spread, seeds in ((0.1, 1), (-1.0, 5), (np.nan, 5)):
            with self.assertRaises(ValueError):
                stats.planned_half_width(spread, seeds)


def coverage(draw, truth, level=0.95):
    rng = np.random.default_rng(11)
    return np.mean([draw(rng).contains(truth) for _ in range(DRAWS)])


class Replicates(unittest.TestCase):
    def test_three_seeds_cover_at_the_stated_level(self):
        # The t-interval of 3 replicates covers 95 %; mean +- 2 SE only ~82 %.
        c = coverage(lambda rng: stats.t_interval(1.5 + rng.standard_normal(3)), 1.5)
        self.assertAlmostEqual(c, 0.95, delta=0.015)
        rng = np.random.default_rng(5)
        naive = 0
        for _ in range(DRAWS):
            v = rng.standard_normal(3)
            naive += abs(v.mean()) < 2 * v.std(ddof=1) / np.sqrt(3)
        self.assertAlmostEqual(naive / DRAWS, 0.82, delta=0.02)

    def test_exact_numbers(self):
        iv = stats.t_interval([1.0, 2.0, 3.0])
        self.assertEqual((iv.value, iv.dof), (2.0, 2))
        self.assertAlmostEqual(iv.error, 1 / np.sqrt(3), places=12)
        self.assertAlmostEqual(iv.high - iv.value, 4.302653 / np.sqrt(3), places=5)
        self.assertEqual(iv.label(), "95 % t, 2 dof")
        self.assertIn("[", iv.text())
        self.assertTrue(iv.above(-0.5) and not iv.above(0.0) and iv.contains(2.0))


class Paired(unittest.TestCase):
    def test_paired_sees_what_unpaired_cannot(self):
        # A shift of 0.1 under a seed effect of sd 1 and pair noise 0.05:
        # the paired interval excludes 0, the two-sample one does not.
        rng = np.random.default_rng(2)
        seed_effect = rng.standard_normal(6)
        a = seed_effect + 0.1 + 0.05 * rng.standard_normal(6)
        b = seed_effect + 0.05 * rng.standard_normal(6)
        iv = stats.paired(a, b)
        self.assertTrue(iv.above(0.0), iv.text())
        self.assertTrue(iv.contains(0.1), iv.text())
        unpaired = stats.t_interval(a).value - stats.t_interval(b).value
        se = np.hypot(stats.t_interval(a).error, stats.t_interval(b).error)
        self.assertLess(unpaired / se, 2.0)
        self.assertLess(iv.p_value(), 0.01)

    def test_paired_covers(self):
        c = coverage(lambda rng: stats.paired(3 + rng.standard_normal(5), rng.standard_normal(5) + 2.5), 0.5)
        self.assertAlmostEqual(c, 0.95, delta=0.015)

    def test_unequal_counts_are_refused(self):
        with self.assertRaises(ValueError):
            stats.paired([1, 2, 3], [1, 2])


class Nested(unittest.TestCase):
    WIDTHS = np.array([16, 32, 64, 128, 256.0])

    def nested_draw(self, rng, seeds):
        # Each seed's curve shares one draw (its slope, pivoting about the
        # middle width) plus small point noise: the points of one seed are
        # not independent, and the spread at each width understates the
        # spread of the slope.
        u = np.log(self.WIDTHS) - np.log(self.WIDTHS).mean()
        slope = -0.5 + 0.05 * rng.standard_normal((seeds, 1))
        level = 0.01 * rng.standard_normal((seeds, 1))
        return np.exp(level - 0.5 * np.log(self.WIDTHS).mean() + slope * u
                      + 0.01 * rng.standard_normal((seeds, self.WIDTHS.size)))

    def test_per_seed_slopes_cover_and_a_pooled_fit_does_not(self):
        rng = np.random.default_rng(4)
        inside, pooled_inside = 0, 0
        for _ in range(1000):
            Y = self.nested_draw(rng, 3)
            fit = stats.per_seed_slopes(self.WIDTHS, Y)
            inside += fit["slope"].contains(-0.5)
            # The pooled fit of the seed means with their standard errors (the
            # design that treats the widths as independent).
            mean, err = Y.mean(axis=0), Y.std(axis=0, ddof=1) / np.sqrt(3)
            w = fits.weighted_power_law(self.WIDTHS, mean, err)
            pooled_inside += abs(w.value + 0.5) < 2 * w.error
        self.assertAlmostEqual(inside / 1000, 0.95, delta=0.025)
        self.assertLess(pooled_inside / 1000, 0.85)

    def test_exact_curves_give_the_exponent(self):
        Y = np.array([2.0, 3.0])[:, None] * self.WIDTHS ** np.array([[-0.4], [-0.6]])
        fit = stats.per_seed_slopes(self.WIDTHS, Y)
        np.testing.assert_allclose(fit.estimates[:, 1], [-0.4, -0.6], atol=1e-12)
        self.assertAlmostEqual(fit["slope"].value, -0.5, places=12)
        self.assertEqual(fit["slope"].dof, 1)

    def test_offset_plus_inverse_root_law(self):
        # y = c + b M^-1/2 per seed: the limit c is recovered with coverage.
        M = np.array([8, 16, 32, 64, 128.0])
        rng = np.random.default_rng(9)
        inside = 0
        for _ in range(1000):
            c = 1.0 + 0.1 * rng.standard_normal((5, 1))
            Y = c + 2.0 * M ** -0.5 + 0.02 * rng.standard_normal((5, M.size))
            fit = stats.per_seed_fits([np.ones_like(M), M ** -0.5], Y, ("limit", "b"))
            inside += fit["limit"].contains(1.0)
            self.assertEqual(fit["limit"].dof, 4)
        self.assertAlmostEqual(inside / 1000, 0.95, delta=0.025)

    def test_bad_shapes_are_refused(self):
        with self.assertRaises(ValueError):
            stats.per_seed_slopes(self.WIDTHS, np.ones((1, 5)))
        with self.assertRaises(ValueError):
            stats.per_seed_slopes(self.WIDTHS, np.ones((3, 4)))
        with self.assertRaises(ValueError):
            stats.per_seed_slopes(self.WIDTHS, -np.ones((3, 5)))


class Line(unittest.TestCase):
    def test_independent_points_cover(self):
        x = np.linspace(0, 1, 6)
        c = coverage(lambda rng: stats.line(x, 1 + 2 * x + 0.1 * rng.standard_normal(6)).slope, 2.0)
        self.assertAlmostEqual(c, 0.95, delta=0.015)

    def test_exact_line(self):
        fit = stats.line([1, 2, 3, 4], [3, 5, 7, 9])
        self.assertAlmostEqual(fit.slope.value, 2.0, places=12)
        self.assertAlmostEqual(fit.intercept.value, 1.0, places=12)
        self.assertEqual(fit.slope.dof, 2)


class Validation(unittest.TestCase):
    def test_split_is_disjoint_complete_and_repeatable(self):
        a, b = stats.validation_split(20, 0.25, seed=3)
        self.assertEqual(len(a), 5)
        self.assertEqual(set(a) | set(b), set(range(20)))
        self.assertFalse(set(a) & set(b))
        a2, _ = stats.validation_split(20, 0.25, seed=3)
        np.testing.assert_array_equal(a, a2)

    def test_best_is_chosen_on_validation_alone(self):
        self.assertEqual(stats.best_on_validation({"x": 0.3, "y": 0.1, "z": np.nan}), "y")
        with self.assertRaises(ValueError):
            stats.best_on_validation({"x": np.nan})

    def test_choosing_on_the_judging_set_is_biased_and_on_validation_is_not(self):
        # Ten equal candidates: the minimum of their judged scores is biased
        # low; a candidate chosen on an independent validation draw is not.
        rng = np.random.default_rng(8)
        same, split = [], []
        for _ in range(DRAWS):
            judged, validation = rng.standard_normal(10), rng.standard_normal(10)
            same.append(judged.min())
            split.append(judged[int(np.argmin(validation))])
        self.assertLess(np.mean(same), -1.4)
        self.assertAlmostEqual(np.mean(split), 0.0, delta=0.05)


if __name__ == "__main__":
    unittest.main()

"""The experiments' baselines, criterion lines and output folders, on data with known answers.

  python3 tests/experiments/test_baselines.py
"""
import argparse
import contextlib
import io
import sys
import tempfile
import unittest
from unittest import mock
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "experiments"))
import baselines  # noqa: E402
import common  # noqa: E402


def icl_data(rng, N, n, d, d_out):
    """The icl-linear task: x ~ N(0, I_p) in every token, W rows ~ N(0, I/p),
    context tokens (x_j, W x_j), query (x_q, 0), target W x_q."""
    p = d - d_out
    x = rng.standard_normal((N, n, p))
    W = rng.standard_normal((N, d_out, p)) / np.sqrt(p)
    y = np.einsum("nop,nkp->nko", W, x)
    tokens = np.concatenate([x, y], axis=2)
    tokens[:, -1, p:] = 0.0
    return tokens, y[:, -1, :]


class InContextPredictors(unittest.TestCase):
    """The in-context unigram and bigram predictors, position by position,
    against counts written out by hand."""

    def test_by_hand(self):
        s = np.array([[0, 1, 0, 1, 1]])
        uni, bi = baselines.in_context_predictors(s, 2, 0.5)
        self.assertEqual(uni.shape, (1, 4, 2))
        # after 0, 1, 0 (t = 2): counts (2, 1), (c + 1) / (3 + 2)
        np.testing.assert_allclose(uni[0, 2], [3 / 5, 2 / 5])
        # after 0, 1, 0, 1 (t = 3): transitions 0->1, 1->0, 0->1; from s_3 = 1: one 1->0
        np.testing.assert_allclose(bi[0, 3], [(1 + 0.5) / (1 + 1), (0 + 0.5) / (1 + 1)])
        # t = 0: nothing seen but s_0: the uniform law for the bigram
        np.testing.assert_allclose(bi[0, 0], [0.5, 0.5])
        expected = -np.mean(np.log([bi[0, 0, 1], bi[0, 1, 0], bi[0, 2, 1], bi[0, 3, 1]]))
        self.assertAlmostEqual(baselines.mean_cross_entropy(bi, s), expected, places=14)

    def test_against_a_loop(self):
        rng = np.random.default_rng(3)
        k, alpha = 3, 0.7
        s = rng.integers(0, k, size=(4, 9))
        uni, bi = baselines.in_context_predictors(s, k, alpha)
        for i in range(4):
            for t in range(8):
                seen = list(s[i, :t + 1])
                pairs = list(zip(seen[:-1], seen[1:]))
                for j in range(k):
                    self.assertAlmostEqual(uni[i, t, j], (seen.count(j) + 1) / (t + 1 + k), places=14)
                    row = [b for a, b in pairs if a == s[i, t]]
                    self.assertAlmostEqual(bi[i, t, j], (row.count(j) + alpha) / (len(row) + k * alpha), places=14)

    def test_kl_and_the_path(self):
        p = np.array([[0.5, 0.25, 0.25]])
        self.assertAlmostEqual(baselines.mean_kl(p, p), 0.0)
        self.assertAlmostEqual(baselines.mean_kl(p, np.full((1, 3), 1 / 3)), np.log(3) - 1.5 * np.log(2), places=14)
        # the path from uniform to p passes through p itself (lambda = 1)
        value, lam = baselines.path_min_kl(p, p)
        self.assertAlmostEqual(value, 0.0, places=14)
        self.assertEqual(lam, 1.0)
        # and through p^(1/2) normalised at lambda = 1/2
        q = np.sqrt(p) / np.sqrt(p).sum()
        value, lam = baselines.path_min_kl(q, p)
        self.assertAlmostEqual(lam, 0.5)
        self.assertLess(value, 1e-12)
        with self.assertRaises(ValueError):
            baselines.in_context_predictors(np.array([[0, 3]]), 3, 1.0)


class Risks(unittest.TestCase):
    def test_hand_computed(self):
        """squared_risk and zero_risk on 2x2 arrays: 1/2 mean of (4, 25) and of (1, 25)"""
        pred = np.array([[1.0, 2.0], [0.0, 0.0]])
        y = np.array([[1.0, 0.0], [3.0, 4.0]])
        self.assertEqual(baselines.squared_risk(pred, y), 7.25)
        self.assertEqual(baselines.zero_risk(y), 6.5)
        self.assertEqual(baselines.squared_risk(np.zeros_like(y), y), baselines.zero_risk(y))
        self.assertEqual(baselines.zero_risk([[2.0], [0.0]]), 1.0)


class IclLinear(unittest.TestCase):
    n, d = 16, 8  # p = 7 for d_out = 1

    def test_least_squares_is_exact_without_noise(self):
        """least squares, d_out = 1 and 2, n-1 = 15 >= p: risk < 1e-20"""
        rng = np.random.default_rng(11)
        for d_out in (1, 2):
            tokens, y = icl_data(rng, 200, self.n, self.d, d_out)
            pred = baselines.icl_least_squares(tokens, d_out)
            self.assertEqual(pred.shape, (200, d_out))
            risk = baselines.squared_risk(pred, y)
            print(f"\n  least squares, d_out = {d_out}: risk {risk:.3g}", end=" ")
            self.assertLess(risk, 1e-20)

    def test_least_squares_is_minimum_norm_when_underdetermined(self):
        """least squares with n-1 = 3 < p = 7 matches np.linalg.lstsq sequence by sequence"""
        rng = np.random.default_rng(12)
        tokens, _ = icl_data(rng, 20, 4, self.d, 1)
        pred = baselines.icl_least_squares(tokens, 1)
        for i in range(20):
            w = np.linalg.lstsq(tokens[i, :-1, :7], tokens[i, :-1, 7:], rcond=None)[0]
            self.assertAlmostEqual(pred[i, 0], float(tokens[i, -1, :7] @ w[:, 0]), places=10)

    def test_one_step_matches_its_definition(self):
        """one-step GD equals eta/(n-1) sum_j (x_j . x_q) y_j written as a loop (d_out = 2)"""
        rng = np.random.default_rng(13)
        tokens, _ = icl_data(rng, 5, 6, 5, 2)
        pred = baselines.icl_one_step_gd(tokens, 2, 0.3)
        for i in range(5):
            want = sum(tokens[i, j, :3] @ tokens[i, -1, :3] * tokens[i, j, 3:] for j in range(5)) * 0.3 / 5
            np.testing.assert_allclose(pred[i], want, rtol=1e-12)

    def test_zero_risk_matches_its_expectation(self):
        """zero risk of 200 sequences within 4 standard errors of 1/2 E y^2 = 1/2"""
        rng = np.random.default_rng(14)
        N, p = 200, 7
        _, y = icl_data(rng, N, self.n, self.d, 1)
        # y = w . x with |w|^2 ~ chi2_p / p: E y^2 = 1, E y^4 = 3 (1 + 2/p).
        se = 0.5 * np.sqrt(3 * (1 + 2 / p) - 1) / np.sqrt(N)
        risk = baselines.zero_risk(y)
        print(f"\n  zero risk {risk:.4f}, expected 0.5 +- {se:.4f}", end=" ")
        self.assertLess(abs(risk - 0.5), 4 * se)

    def test_fitted_one_step_lies_between(self):
        """one-step GD with the fitted eta: 0 < risk < zero risk, and eta is the minimiser"""
        rng = np.random.default_rng(15)
        tokens, y = icl_data(rng, 200, self.n, self.d, 1)
        eta = baselines.fit_one_step_eta(tokens, y, 1)
        risk = baselines.squared_risk(baselines.icl_one_step_gd(tokens, 1, eta), y)
        self.assertGreater(risk, 0.0)
        self.assertLess(risk, baselines.zero_risk(y))
        for other in (0.9 * eta, 1.1 * eta):
            self.assertGreater(baselines.squared_risk(baselines.icl_one_step_gd(tokens, 1, other), y), risk)

    def test_optimal_eta_and_risk_ratio(self):
        """N = 4000: fitted eta within 4 se of m/(m+p+1) and risk ratio within 4 se of (p+1)/(m+p+1)"""
        # a = x_q^T S w with S = (1/m) sum_j x_j x_j^T (Wishart, E S = I,
        # E S^2 = (m+p+1)/m I): E[a y] = 1, E[a^2] = (m+p+1)/m, E[y^2] = 1, so
        # eta* = m/(m+p+1) and risk(eta*)/zero risk = 1 - m/(m+p+1).
        m, p, N = self.n - 1, self.d - 1, 4000
        rng = np.random.default_rng(16)
        tokens, y = icl_data(rng, N, self.n, self.d, 1)
        eta = baselines.fit_one_step_eta(tokens, y, 1)
        ratio = baselines.squared_risk(baselines.icl_one_step_gd(tokens, 1, eta), y) / baselines.zero_risk(y)
        # Standard errors of the two ratio estimators (delta method on the
        # sample means A = <a y>, B = <a a>, C = <y y>).
        a, y = baselines.icl_one_step_gd(tokens, 1, 1.0)[:, 0], y[:, 0]
        A, B, C = np.mean(a * y), np.mean(a * a), np.mean(y * y)
        eta_se = np.std(a * y - A / B * a * a) / B / np.sqrt(N)
        grad = np.array([-2 * A / (B * C), A * A / (B * B * C), A * A / (B * C * C)])
        ratio_se = np.sqrt(grad @ np.cov(np.stack([a * y, a * a, y * y])) @ grad / N)
        eta_star, ratio_star = m / (m + p + 1), (p + 1) / (m + p + 1)
        print(f"\n  eta {eta:.4f} +- {eta_se:.4f} (theory {eta_star:.4f}); "
              f"ratio {ratio:.4f} +- {ratio_se:.4f} (theory {ratio_star:.4f})", end=" ")
        self.assertAlmostEqual(ratio, 1 - A * A / (B * C), places=12)
        self.assertLess(abs(eta - eta_star), 4 * eta_se)
        self.assertLess(abs(ratio - ratio_star), 4 * ratio_se)


class Classifiers(unittest.TestCase):
    def blobs(self, rng, N, centres):
        c = rng.integers(len(centres), size=N)
        return np.asarray(centres, float)[c] + rng.standard_normal((N, 2)), c

    def test_separated_blobs(self):
        """two and three Gaussian blobs 10 sd apart: accuracy 1.0 for both, with indices or one-hot labels"""
        rng = np.random.default_rng(21)
        for centres in ([(-5, 0), (5, 0)], [(-5, 0), (5, 0), (0, 9)]):
            X, c = self.blobs(rng, 400, centres)
            T, t = self.blobs(rng, 400, centres)
            onehot = np.eye(len(centres))[c]
            for f in (baselines.logistic_regression_accuracy, baselines.nearest_centroid_accuracy):
                self.assertEqual(f(X, c, T, t), 1.0)
                self.assertEqual(f(X, onehot, T, np.eye(len(centres))[t]), 1.0)

    def test_logistic_regression_on_identical_classes(self):
        """logistic regression, labels independent of x (share 0.7): accuracy within 4 binomial sd of 0.7"""
        rng = np.random.default_rng(22)
        N = 2000
        X, T = rng.standard_normal((N, 2)), rng.standard_normal((N, 2))
        c, t = (rng.random(N) > 0.7).astype(int), (rng.random(N) > 0.7).astype(int)
        acc = baselines.logistic_regression_accuracy(X, c, T, t)
        print(f"\n  accuracy {acc:.4f}, test majority share {np.mean(t == 0):.4f}", end=" ")
        self.assertLess(abs(acc - 0.7), 4 * np.sqrt(0.7 * 0.3 / N))

    def test_nearest_centroid_by_hand(self):
        """nearest centroid: centroids (1,0) and (0,5); (1,1) -> 0, (0,3) -> 1, (2,2.6) -> 0 (1-NN says 1)"""
        X = np.array([[0, 0], [2, 0], [0, 4], [0, 6.0]])
        c = np.array([0, 0, 1, 1])
        T = np.array([[1, 1], [0, 3], [2, 2.6]])
        self.assertEqual(baselines.nearest_centroid_accuracy(X, c, T, [0, 1, 0]), 1.0)
        self.assertAlmostEqual(baselines.nearest_centroid_accuracy(X, c, T, [0, 1, 1]), 2 / 3, places=15)

    def test_nearest_centroid_agrees_with_sklearn(self):
        """nearest centroid equals sklearn's NearestCentroid on overlapping 3-class data in (N, 4, 3) tokens"""
        from sklearn.neighbors import NearestCentroid
        rng = np.random.default_rng(23)
        X, T = rng.standard_normal((300, 4, 3)), rng.standard_normal((300, 4, 3))
        c = rng.integers(3, size=300)
        X[:, 0, 0] += c
        t = rng.integers(3, size=300)
        F, G = baselines.tokens_as_features(X), baselines.tokens_as_features(T)
        self.assertEqual(F.shape, (300, 12))
        want = float(np.mean(NearestCentroid().fit(F, c).predict(G) == t))
        self.assertEqual(baselines.nearest_centroid_accuracy(X, c, T, t), want)


class Criteria(unittest.TestCase):
    cases = [("risk below the zero risk", True, "0.12 < 0.40"),
             ("rate: slope within 2 se", False, "slope -0.48, se 0.01, theory -0.5"),
             ("empty numbers", True, "")]

    def test_round_trip(self):
        """criterion() prints one line per call and parse_criteria reads back (text, verdict, numbers)"""
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            lines = [common.criterion(*case) for case in self.cases]
            print("[driver] some other line")
        self.assertEqual(out.getvalue().splitlines(), lines + ["[driver] some other line"])
        self.assertEqual(lines[0], "criterion: risk below the zero risk: holds (0.12 < 0.40)")
        want = [(text, "holds" if holds else "fails", numbers) for text, holds, numbers in self.cases]
        self.assertEqual(common.parse_criteria(out.getvalue()), want)

    def test_written_file(self):
        """write_criteria names the file like write_csv (<name>-criteria.txt, quick: <name>-quick-criteria.txt)"""
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):
            lines = [common.criterion(*case) for case in self.cases]
            for quick, file in ((False, "demo-criteria.txt"), (True, "demo-quick-criteria.txt")):
                options = argparse.Namespace(out=folder, quick=quick)
                path = common.write_criteria("demo", options, lines)
                self.assertEqual(path, Path(folder) / file)
                self.assertEqual(len(common.parse_criteria(path.read_text())), 3)


    def test_sanity_checks_are_read_apart(self):
        """sanity() writes its own kind of line: parse_verdicts reads both kinds, parse_criteria only criteria"""
        with contextlib.redirect_stdout(io.StringIO()):
            lines = [common.criterion(*self.cases[0]), common.sanity("K is symmetric", True, "0")]
            with self.assertRaises(ValueError):
                common.verdict("claim", "x", True, "")
        self.assertEqual(lines[1], "sanity: K is symmetric: holds (0)")
        text = "\n".join(lines)
        self.assertEqual(common.parse_verdicts(text), [("criterion", "risk below the zero risk", "holds", "0.12 < 0.40"),
                                                       ("sanity", "K is symmetric", "holds", "0")])
        self.assertEqual(common.parse_criteria(text), [("risk below the zero risk", "holds", "0.12 < 0.40")])


class Endings(unittest.TestCase):
    """A run has ended when it interpolates (R <= 1e-10 R(0)) or separates
    its training set with a margin; otherwise by its fitted last fifth."""

    def history(self, risk):
        risk = np.asarray(risk, float)
        return {"step": np.arange(risk.size), "tau": 0.1 * np.arange(risk.size), "risk": risk}

    def test_an_interpolating_run_has_ended_though_it_still_falls(self):
        falling = self.history(np.exp(-0.5 * np.arange(60)))  # R(end) = e^-29.5 = 1.5e-13 R(0)
        self.assertEqual(common.run_ending(falling), "interpolated")
        self.assertEqual(common.run_ending(self.history(np.exp(-0.3 * np.arange(60)))), "still falling")  # 2e-8
        self.assertEqual(common.run_ending(self.history(np.full(20, 0.3))), "plateau")

    def test_the_margin_rule(self):
        labels = np.array([0, 1, 2, 1])
        logits = np.array([[3.0, 0.0, 0.8], [0.0, 2.2, 0.0], [0.0, 0.0, 1.0], [5.0, 6.0, 0.0]])
        # margins 2.2, 2.2, 1.0, 1.0: two of four at least log 9 = 2.197
        self.assertEqual(common.margin_fraction(logits, labels), 0.5)
        self.assertEqual(common.margin_fraction(logits, np.eye(3)[labels], margin=1.0), 1.0)
        slow = self.history(1.0 / (1.0 + np.arange(40)))  # 1/tau: never a plateau, never 1e-10
        self.assertEqual(common.run_ending(slow), "still falling")
        wide = np.eye(3)[labels] * 3.0
        self.assertEqual(common.run_ending(slow, logits=wide, labels=labels), "separated")
        self.assertEqual(common.run_ending(slow, logits=logits, labels=labels), "still falling")


class Provenance(unittest.TestCase):
    """Every results row that names its run files carries their mft version
    and the earliest creation time."""

    def run_file(self, folder, stem, version, created):
        import h5py
        path = Path(folder) / f"{stem}.h5"
        with h5py.File(path, "w") as f:
            f.attrs["mft_version"], f.attrs["created"] = version, created
        return path

    def test_rows_carry_their_runs_version_and_earliest_time(self):
        with tempfile.TemporaryDirectory() as folder, contextlib.redirect_stdout(io.StringIO()):
            a = self.run_file(folder, "a", "0.1.0 (abc)", "2026-12-05T10:00:00+0000")
            b = self.run_file(folder, "b", "0.1.0 (abc)", "2026-12-05T09:30:00+0000")
            c = self.run_file(folder, "c", "0.1.1 (def)", "2026-12-05T11:00:00+0000")
            options = argparse.Namespace(out=folder, quick=False)
            path = common.write_csv("demo", options, ["x"], [{"x": 1, "runs": [a, b]}, {"x": 2, "runs": [a, c]}])
            self.assertEqual(path.read_text().splitlines(),
                             ["x,mft_version,created", "1,0.1.0 (abc),2026-12-05T09:30:00Z",
                              "2,0.1.0 (abc) + 0.1.1 (def),2026-12-05T10:00:00Z"])
            # rows without runs: the CSV as before; some with, some without: refused
            path = common.write_csv("demo", options, ["x"], [{"x": 1}])
            self.assertEqual(path.read_text().splitlines(), ["x", "1"])
            with self.assertRaises(SystemExit) as refused:
                common.write_csv("demo", options, ["x"], [{"x": 1, "runs": [a]}, {"x": 2}])
            self.assertIn("1 of 2 rows name no run files", str(refused.exception))


    def test_update_docs_reruns_a_file_made_before_the_drivers_commit(self):
        """A complete run file is reused, unless it was created before the commit the results are to come from"""
        commit = common.preregistration.parse_time("2026-12-05T10:00:00Z")
        run = common.Run("demo", {"model.heads": 4})
        for created, reused in (("2026-12-05T09:59:59+0000", False), ("2026-12-05T10:00:01+0000", True)):
            with tempfile.TemporaryDirectory() as folder:
                path = self.run_file(folder, "demo", "0.1.0 (abc)", created)
                with mock.patch.object(common, "_complete", return_value=True), \
                        mock.patch.object(common.subprocess, "run") as ran:
                    ran.return_value.returncode = 0
                    _, status = common._run_one(run, path, 1, False, commit)
                self.assertEqual((status, ran.called), ("reused", False) if reused else ("ran", True), created)


class Outputs(unittest.TestCase):
    """Where a driver writes: beside its runs unless told; the committed
    docs/ files only with --update-docs."""

    def parse(self, *argv):
        # --update-docs asks git whether the driver is committed; where a
        # driver writes does not depend on that (tested on its own in
        # test_preregistration.py).
        with mock.patch.object(common.preregistration, "start", return_value="0" * 40):
            return common.parser("demo").parse_args(list(argv))

    def test_default_is_the_runs_folder(self):
        options = self.parse("--runs", "/tmp/r")
        self.assertEqual((options.out, options.figures), ("/tmp/r", "/tmp/r"))
        options = self.parse()
        self.assertEqual(Path(options.out), common.ROOT / "runs" / "experiments")
        self.assertEqual(options.figures, options.out)

    def test_update_docs(self):
        options = self.parse("--update-docs")
        self.assertEqual(Path(options.out), common.ROOT / "docs" / "experiments")
        self.assertEqual(Path(options.figures), common.ROOT / "docs" / "figures")

    def test_explicit_folders_win(self):
        options = self.parse("--update-docs", "--out", "/tmp/o")
        self.assertEqual((options.out, Path(options.figures)), ("/tmp/o", common.ROOT / "docs" / "figures"))
        options = self.parse("--out", "/tmp/o", "--figures", "/tmp/f")
        self.assertEqual((options.out, options.figures), ("/tmp/o", "/tmp/f"))
        with tempfile.TemporaryDirectory() as folder:
            options = self.parse("--figures", folder, "--quick")
            self.assertEqual(common.figure_path("demo", options), Path(folder) / "exp_demo-quick.png")


if __name__ == "__main__":
    unittest.main(verbosity=2)

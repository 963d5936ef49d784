"""mft.tokens on constructed token sets whose answers are known: cluster
counts, cosines, the interaction energy, the rank and leaders of attention
matrices, the profile along depth, the views of the trajectories (--coords)
and the scale of the cluster panel, and the command line on a file written
here (run with test_package.py)."""
import io
import os
import shutil
import subprocess
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

import h5py
import numpy as np

from fixtures import PYTHON, SCRIPTS, write_run
from mft import tokens


def circle(angles):
    a = np.asarray(angles, dtype=float)
    return np.stack([np.cos(a), np.sin(a)], axis=-1)


class TokenGeometry(unittest.TestCase):
    def test_clusters_of_constructed_sets(self):
        rng = np.random.default_rng(0)
        # Three tight groups far apart, of 5, 1 and 4 tokens, in R^3.
        centres = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]])
        X = np.concatenate([c + 1e-4 * rng.standard_normal((k, 3)) for c, k in zip(centres, (5, 1, 4))])
        self.assertEqual(tokens.cluster_count(X, 1e-2), 3)
        labels = tokens.cluster_labels(X, 1e-2)
        self.assertEqual(sorted(np.bincount(labels)), [1, 4, 5])
        # eps beyond the groups' distance (sqrt 2): one cluster; below the
        # spread within a group: every token alone.
        self.assertEqual(tokens.cluster_count(X, 2.0), 1)
        self.assertEqual(tokens.cluster_count(X, 1e-8), 10)
        # A chain of steps below eps is one component, not a clique.
        chain = circle(np.arange(20) * 0.05)
        self.assertEqual(tokens.cluster_count(chain, 0.06), 1)
        self.assertEqual(tokens.cluster_count(chain, 0.04), 20)

    def test_cosines_and_energy(self):
        X = circle([0.0, np.pi / 2, np.pi])  # cosines 0, -1, 0
        low, mean = tokens.cosines(X)
        self.assertAlmostEqual(low, -1.0, places=14)
        self.assertAlmostEqual(mean, -1.0 / 3, places=14)
        # E = (1 / (2 beta n^2)) sum_ij exp(beta <x_i, x_j>): n = 3, Gram
        # 1 on the diagonal, 0 four times, -1 twice.
        beta = 2.0
        expected = (3 * np.exp(beta) + 4 + 2 * np.exp(-beta)) / (2 * beta * 9)
        self.assertAlmostEqual(tokens.interaction_energy(X, beta), expected, places=14)
        # One cluster maximises it on the sphere: exp(beta) / (2 beta).
        self.assertAlmostEqual(tokens.interaction_energy(np.tile([[0.6, 0.8]], (7, 1)), beta),
                               np.exp(beta) / (2 * beta), places=12)

    def test_rank_and_leaders(self):
        # Every token attends to token 2 alone: rank 1, one leader.
        P = np.zeros((5, 5))
        P[:, 2] = 1.0
        self.assertEqual(tokens.numerical_rank(P), 1)
        self.assertEqual(list(tokens.leaders(P)), [2])
        # Uniform attention: rank 1 as well, but every token shares the lead.
        U = np.full((4, 4), 0.25)
        self.assertEqual(tokens.numerical_rank(U), 1)
        self.assertEqual(len(tokens.leaders(U, share=0.9)), 4)
        # Softmax with large beta on two clusters: each token follows its own.
        X = np.concatenate([circle([0.0] * 3), circle([np.pi] * 2)])
        beta = 50.0
        Q = K = np.sqrt(beta) * np.eye(2)
        W = tokens.attention_weights(X, Q, K, {"model.attention": "softmax", "model.causal": "false"})
        self.assertEqual(tokens.numerical_rank(W, 1e-8), 2)
        np.testing.assert_allclose(W.sum(axis=1), 1.0)

    def test_profile_and_command_line(self):
        # Two sequences, three depths: 4 distinct tokens, then 2 clusters, then 1.
        rows = [circle([0, 1, 2, 3]), circle([0, 0, 2, 2]), circle([1, 1, 1, 1])]
        T = np.stack([np.stack(rows), np.stack(rows)])  # (2, 3, 4, 2)
        prof = tokens.profile(T, 1e-6, beta=1.0)
        np.testing.assert_array_equal(prof["clusters"], [4, 2, 1])
        np.testing.assert_allclose(prof["energy"][-1], np.exp(1.0) / 2)
        np.testing.assert_allclose(prof["min_cos"][-1], 1.0)
        tmp = Path(tempfile.mkdtemp(prefix="mft-tokens-"))
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        path = tmp / "run.h5"
        write_run(str(path), history=False)
        with h5py.File(path, "a") as f:
            f["forward/tokens_depth"] = T
            f["forward/depth"] = np.array([0.0, 0.5, 1.0])
        self.assertEqual(tokens.main([str(path), "--eps", "1e-6", "--beta", "1", "-o", str(tmp / "t.png")]), 0)
        self.assertTrue((tmp / "t.png").stat().st_size > 0)


def depth_tokens(d=4, N=2, n=4, K=3):
    """(N, K+1, n, d) tokens whose coordinates 1 and 3 stay 0: all their
    spread in the plane of coordinates 0 and 2."""
    rng = np.random.default_rng(7)
    T = np.zeros((N, K + 1, n, d))
    T[..., 0] = rng.standard_normal((N, K + 1, n))
    T[..., 2] = 3 * rng.standard_normal((N, K + 1, n))
    return T


class TokenViews(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-tokens-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.T = depth_tokens()
        self.path = str(self.tmp / "run.h5")
        write_run(self.path, history=False)
        with h5py.File(self.path, "a") as f:
            f["forward/tokens_depth"] = self.T
            f["forward/depth"] = np.linspace(0, 1, self.T.shape[1])

    def test_projection(self):
        X = self.T[1]
        points, labels, what = tokens.projection(X, (0, 3))
        np.testing.assert_array_equal(points[..., 0], X[..., 0])
        np.testing.assert_array_equal(points[..., 1], X[..., 3])
        self.assertEqual(labels, ("x[0]", "x[3]"))
        # d = 4: principal axes by default; all the spread lies in a plane,
        # so the view keeps every distance and the two axes hold 100 %.
        points, labels, what = tokens.projection(X)
        self.assertIn("principal axes", what)
        flat, view = X.reshape(-1, 4), points.reshape(-1, 2)
        np.testing.assert_allclose(np.linalg.norm(view[:, None] - view[None], axis=-1),
                                   np.linalg.norm(flat[:, None] - flat[None], axis=-1), atol=1e-12)
        shares = [float(label.split("(")[1].split(" %")[0]) for label in labels]
        self.assertEqual(sum(shares), 100.0)
        self.assertGreater(shares[0], shares[1])  # coordinate 2 spreads 3 times as far
        with self.assertRaises(ValueError):
            tokens.projection(X, (0, 4))
        self.assertEqual(tokens.parse_coords(" 0,3"), (0, 3))
        self.assertEqual(tokens.parse_coords("PCA"), "pca")

    def test_command_line_coords(self):
        out = io.StringIO()
        with redirect_stdout(out):
            self.assertEqual(tokens.main([self.path, "--coords", "0,3", "--sequence", "1",
                                          "-o", str(self.tmp / "t.png")]), 0)
        self.assertIn("trajectories of sequence 1: coordinates x[0] and x[3]", out.getvalue())
        self.assertTrue((self.tmp / "t.png").read_bytes().startswith(b"\x89PNG"))
        prof = tokens.profile(self.T, 1e-2)
        fig = tokens.plot(self.path, self.T, np.linspace(0, 1, 4), prof, 1, 1e-2, None, (0, 3))
        left, right = fig.axes[:2]
        self.assertEqual((left.get_xlabel(), left.get_ylabel()), ("x[0]", "x[3]"))
        for j, line in enumerate(left.get_lines()):
            np.testing.assert_array_equal(line.get_xdata(), self.T[1, :, j, 0])
            np.testing.assert_array_equal(line.get_ydata(), self.T[1, :, j, 3])
        self.assertEqual(len(left.get_lines()), 4)
        # The four tokens stay apart: 4 clusters at every depth, a linear axis.
        self.assertEqual(right.get_yscale(), "linear")
        self.assertEqual(right.get_ylim(), (0.0, 5.0))
        self.assertIn("clusters of the n = 4 tokens", right.get_ylabel())
        # Coordinates the tokens do not have: one line, exit status 1 (2 for a malformed pair).
        for coords, status, words in (("0,4", 1, "d = 4 coordinates"), ("2,2", 2, "two different"),
                                      ("x", 2, "two different")):
            done = subprocess.run([PYTHON, str(SCRIPTS / "plot_tokens.py"), self.path, "--coords", coords,
                                   "-o", str(self.tmp / "u.png")], capture_output=True, text=True,
                                  env=dict(os.environ, PYTHONPATH=str(SCRIPTS)))
            self.assertEqual(done.returncode, status, done.stderr)
            self.assertIn(words, done.stderr)
            self.assertEqual(done.stdout, "")

    def test_cluster_scale(self):
        few = {"clusters_min": np.array([4, 2, 1]), "clusters_max": np.array([4, 3, 1])}
        many = {"clusters_min": np.array([40, 9, 1]), "clusters_max": np.array([40, 12, 2])}
        self.assertEqual(tokens.cluster_scale(few), "linear")
        self.assertEqual(tokens.cluster_scale(many), "log")
        rows = [np.eye(2)[[0, 1] * 20] * (1 + 0.1 * np.arange(40))[:, None], np.tile([[1.0, 0.0]], (40, 1))]
        T = np.stack([np.stack(rows)])  # 40 tokens apart, then one cluster
        prof = tokens.profile(T, 1e-2)
        np.testing.assert_array_equal(prof["clusters"], [40, 1])
        fig = tokens.plot(self.path, T, np.array([0.0, 1.0]), prof, 0, 1e-2, None)
        self.assertEqual(fig.axes[1].get_yscale(), "log")
        self.assertIn("(log scale)", fig.axes[1].get_ylabel())

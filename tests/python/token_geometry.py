"""mft.tokens on constructed token sets whose answers are known: cluster
counts, cosines, the interaction energy, the rank and leaders of attention
matrices, the profile along depth and the command line on a file written
here (run with test_package.py)."""
import shutil
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from fixtures import write_run
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
        W = tokens.attention_weights(X, Q, K)
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

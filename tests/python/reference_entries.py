"""The tables of mft.reference as registries bound to the configuration: a
lookup names its key and the known entries; an entry that owns a key of
its own reads it from the configuration, and the callers (forward, the
forward-mode derivative, mft.tokens) take it without a change. The
particle species of a run file come from the datasets' `species`
attributes, whatever their names."""
import math
import shutil
import tempfile
import unittest
from unittest import mock
from pathlib import Path

import h5py
import numpy as np

from fixtures import write_run
from mft import io as mft_io
from mft import reference, tokens

CONFIG = {"depth.ts_type": "rk", "depth.rk_type": "4", "depth.steps_per_slice": 2, "model.causal": "true"}


def scaled_tanh(config):
    """A score map that owns a key: tanh(c s_ab) / |A_a|, c = model.tanh_scale."""
    c = float(config.get("model.tanh_scale", 1.0))
    return reference.ScoreMap(
        lambda s, seen, count: np.where(seen, np.tanh(c * s), 0.0) / count,
        lambda s, ds, p, seen, count: np.where(seen, c * (1.0 - np.tanh(c * s) ** 2) * ds, 0.0) / count)


class ReferenceEntries(unittest.TestCase):
    def test_lookups_name_the_key_and_the_entries(self):
        for lookup, key, known in ((reference.score_map, "model.attention", reference.SCORE_MAPS),
                                   (reference.activation, "model.activation", reference.ACTIVATIONS),
                                   (reference.token_norm, "model.norm", reference.NORMS),
                                   (reference.readout, "readout.kind", reference.READOUTS),
                                   (reference.loss_function, "loss.kind", reference.LOSSES)):
            with self.assertRaises(ValueError) as caught:
                lookup({key: "no-such"})
            for word in (key, "'no-such'", *known):
                self.assertIn(word, str(caught.exception))

    def test_an_entry_with_a_key_of_its_own(self):
        added = mock.patch.dict(reference.SCORE_MAPS, {"scaled-tanh": scaled_tanh})
        added.start()
        self.addCleanup(added.stop)
        rng = np.random.default_rng(3)
        L, M, d, n = 2, 3, 3, 4
        theta = {"Q": rng.standard_normal((L, M, 2, d)), "K": rng.standard_normal((L, M, 2, d)),
                 "V": rng.standard_normal((L, M, d, d))}
        X0, y = rng.standard_normal((5, n, d)), rng.standard_normal((5, 1))
        cfg = dict(CONFIG, **{"model.attention": "scaled-tanh", "model.tanh_scale": 0.3})
        # The key reaches the weights through the configuration alone.
        X, Q, K = X0[0], theta["Q"][0, 0], theta["K"][0, 0]
        s = (X @ Q.T) @ (X @ K.T).T
        expected = np.tril(np.tanh(0.3 * s)) / np.arange(1, n + 1)[:, None]
        np.testing.assert_allclose(tokens.attention_weights(X, Q, K, cfg), expected, rtol=1e-14)
        self.assertFalse(np.allclose(tokens.attention_weights(X, Q, K, dict(cfg, **{"model.tanh_scale": 1.0})),
                                     expected))
        # The forward-mode derivative agrees with central differences of R.
        u = {k: rng.standard_normal(v.shape) for k, v in theta.items()}
        _, jvp = reference.directional_derivative(X0, y, theta, cfg, u)
        eps = 1e-5
        R = [reference.risk(X0, y, {k: v + sign * eps * u[k] for k, v in theta.items()}, cfg) for sign in (1, -1)]
        self.assertTrue(math.isclose(jvp, (R[0] - R[1]) / (2 * eps), rel_tol=1e-7))


class SpeciesFromAttributes(unittest.TestCase):
    def test_a_tagged_species_of_any_name(self):
        tmp = Path(tempfile.mkdtemp(prefix="mft-species-"))
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        path = str(tmp / "run.h5")
        arrays, _ = write_run(path, mlp=False)
        with h5py.File(path, "r+") as f:
            for name in ("Q", "K", "V"):
                f["particles/" + name].attrs["species"] = "heads"
            f["particles/D"] = np.zeros(arrays["Q"].shape[:3] + (2, 2))
            f["particles/D"].attrs["species"] = "experts"
        with mft_io.open_run(path) as run:
            self.assertEqual(list(run.species.items()),
                             [("Q", "heads"), ("K", "heads"), ("V", "heads"), ("D", "experts")])
            self.assertEqual(run.particles_xarray("D").dims[2], "expert")
            self.assertEqual(sorted(run.particles(0)), ["D", "K", "Q", "V"])

"""The tables of mft.reference as registries bound to the configuration: a
lookup names its key and the known entries; an entry that owns a key of
its own reads it from the configuration, and the callers (forward, the
forward-mode derivative, mft.tokens) take it without a change; a particle
species added to the reference's SPECIES joins the field's mean over the
species the particles hold, with no change to the field either. The
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


def linear_species(config):
    """A toy species of one matrix D (d, d) per particle: (1/M) sum_m D_m x
    for every token x."""
    def field(X, mats):
        (D,) = mats
        return np.einsum("mkd,ind->ink", D, X) / D.shape[0]

    def field_jvp(X, dX, mats, dmats):
        (D,), (dD,) = mats, dmats
        return field(X, mats), (np.einsum("mkd,ind->ink", dD, X) + np.einsum("mkd,ind->ink", D, dX)) / D.shape[0]

    return reference.Species("experts", ("D",), field, field_jvp)


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


class ReferenceSpecies(unittest.TestCase):
    def particles(self, rng, L=2, M=3, M_f=4, M_D=2, d=3, d_h=2, d_f=5):
        return {"Q": rng.standard_normal((L, M, d_h, d)), "K": rng.standard_normal((L, M, d_h, d)),
                "V": 0.5 * rng.standard_normal((L, M, d, d)), "W1": rng.standard_normal((L, M_f, d_f, d)),
                "W2": 0.5 * rng.standard_normal((L, M_f, d, d_f)), "D": 0.5 * rng.standard_normal((L, M_D, d, d))}

    def test_heads_and_neurons_as_ever(self):
        rng = np.random.default_rng(5)
        theta = self.particles(rng)
        X, cfg = rng.standard_normal((4, 5, 3)), dict(CONFIG, **{"model.activation": "gelu"})
        att, act = reference.attention(cfg), reference.activation(cfg)
        species = reference.particle_species(cfg, theta)
        self.assertEqual([s.name for s in species], ["heads", "neurons"])  # D belongs to no species
        for l in range(2):
            heads = reference.attention_field(X, theta["Q"][l], theta["K"][l], theta["V"][l], att)
            neurons = reference.mlp_field(X, theta["W1"][l], theta["W2"][l], act)
            np.testing.assert_array_equal(reference.field(X, theta, l, species), 0.5 * (heads + neurons))
            alone = {k: theta[k] for k in ("Q", "K", "V")}
            alone["W1"], alone["W2"] = theta["W1"][:, :0], theta["W2"][:, :0]  # M_f = 0: no neurons
            only = reference.particle_species(cfg, alone)
            self.assertEqual([s.name for s in only], ["heads"])
            np.testing.assert_array_equal(reference.field(X, alone, l, only), heads)

    def test_a_third_species(self):
        added = mock.patch.dict(reference.SPECIES, {"experts": linear_species})
        added.start()
        self.addCleanup(added.stop)
        rng = np.random.default_rng(7)
        theta = self.particles(rng)
        X0, y = rng.standard_normal((3, 5, 3)), rng.standard_normal((3, 1))
        cfg = dict(CONFIG, **{"model.activation": "gelu"})
        species = reference.particle_species(cfg, theta)
        self.assertEqual([s.name for s in species], ["heads", "neurons", "experts"])
        att, act = reference.attention(cfg), reference.activation(cfg)
        for l in range(2):
            heads = reference.attention_field(X0, theta["Q"][l], theta["K"][l], theta["V"][l], att)
            neurons = reference.mlp_field(X0, theta["W1"][l], theta["W2"][l], act)
            experts = np.einsum("mkd,ind->ink", theta["D"][l], X0) / theta["D"].shape[1]
            np.testing.assert_allclose(reference.field(X0, theta, l, species), (heads + neurons + experts) / 3,
                                       rtol=1e-13, atol=1e-15)
        # Without its particles (M = 0) the species is absent: the mean of the other two.
        empty = dict(theta, D=theta["D"][:, :0])
        self.assertEqual([s.name for s in reference.particle_species(cfg, empty)], ["heads", "neurons"])
        self.assertFalse(np.allclose(reference.forward(X0, empty, cfg), reference.forward(X0, theta, cfg)))
        # The forward-mode derivative through three species agrees with central differences of R.
        u = {k: rng.standard_normal(v.shape) for k, v in theta.items()}
        _, jvp = reference.directional_derivative(X0, y, theta, cfg, u)
        eps = 1e-5
        R = [reference.risk(X0, y, {k: v + sign * eps * u[k] for k, v in theta.items()}, cfg) for sign in (1, -1)]
        self.assertTrue(math.isclose(jvp, (R[0] - R[1]) / (2 * eps), rel_tol=1e-7), (jvp, R))

    def test_particles_of_no_species(self):
        with self.assertRaises(ValueError) as caught:
            reference.particle_species(CONFIG, {"D": np.zeros((2, 3, 4, 4))})
        for word in ("D", "heads", "neurons"):
            self.assertIn(word, str(caught.exception))


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

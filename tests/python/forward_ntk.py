"""The readers of /forward and /ntk (mft.outputs, Run.forward_dataset and
Run.ntk_dataset; run with test_package.py): on the output of the built mft
(MFT, which ctest sets) of a few tokens, on copies of it with the results
newer files add, and on files written here."""
import os
import shutil
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from fixtures import mft_command, one_line_error, small, write_run
import mft
from mft import io as mft_io


@unittest.skipUnless(os.environ.get("MFT"), "needs the built mft (MFT; ctest sets it)")
class ForwardAndNtkFiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="mft-outputs-"))
        mft_command(cls.tmp, "forward", *small(model_heads=3, model_slices=4, model_d=5, model_norm="sphere",
                                               forward_tokens_depth="true", output_file="fwd.h5"))
        mft_command(cls.tmp, "ntk", *small(model_heads=3, data_task="families", cgf_points=40,
                                           output_file="ntk.h5"), "--cgf")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_forward(self):
        path = str(self.tmp / "fwd.h5")
        with mft.open_run(path) as run:
            ds = run.forward_dataset()
        self.assertEqual(dict(ds.sizes), {"sequence": 4, "token": 5, "coordinate": 5, "output": 1, "depth": 5})
        self.assertEqual(ds.tokens_depth.dims, ("sequence", "depth", "token", "coordinate"))
        self.assertEqual(ds.predictions.dims, ("sequence", "output"))
        np.testing.assert_array_equal(ds.depth.values, [0.0, 0.25, 0.5, 0.75, 1.0])  # L = 4 slice boundaries
        with h5py.File(path, "r") as f:
            np.testing.assert_array_equal(ds.predictions.values, f["forward/predictions"][...])
            np.testing.assert_array_equal(ds.tokens_final.values, f["forward/tokens_final"][...])
            np.testing.assert_array_equal(ds.targets.values, f["data/targets"][...])
            self.assertEqual(ds.attrs["risk"], f["forward"].attrs["risk"])
        # R = (1/2N) sum |y_hat - y|^2 from the labelled arrays: predictions and targets line up.
        N = ds.sizes["sequence"]
        self.assertAlmostEqual(float(((ds.predictions - ds.targets) ** 2).sum()) / (2 * N), ds.attrs["risk"],
                               places=13)
        # The last depth row is X(1); on the sphere, the drift is the largest | |x| - 1 |.
        np.testing.assert_array_equal(ds.tokens_depth.sel(depth=1.0).values, ds.tokens_final.values)
        drift = float(abs(np.sqrt((ds.tokens_depth ** 2).sum("coordinate")) - 1).max())
        self.assertAlmostEqual(drift, ds.attrs["norm_drift"], delta=1e-12)
        self.assertGreater(ds.attrs["norm_drift"], 0)
        # Files without the held-out results read without them.
        for name in ("test_risk", "accuracy", "test_accuracy"):
            self.assertNotIn(name, ds.attrs)
        self.assertNotIn("test_predictions", ds)
        one_line_error(self, lambda: mft.open_run(path).ntk_dataset(), path, "no /ntk")

    def test_forward_with_held_out_results(self):
        def held_out(f):
            f["data/test_tokens"] = np.zeros((3, 5, 5))
            f["data/test_targets"] = np.arange(3.0).reshape(3, 1)
            f["forward/test_predictions"] = np.array([[0.5], [1.5], [2.0]])
            f["forward"].attrs.update({"test_risk": 0.125, "accuracy": 0.75, "test_accuracy": 0.5})
        path = self.copy("fwd.h5", "held-out.h5", held_out)
        with mft.open_run(path) as run:
            ds = run.forward_dataset()
        self.assertEqual(ds.test_predictions.dims, ("test_sequence", "output"))
        np.testing.assert_array_equal(ds.test_predictions.values[:, 0], [0.5, 1.5, 2.0])
        np.testing.assert_array_equal(ds.test_targets.values[:, 0], [0.0, 1.0, 2.0])
        self.assertEqual((ds.attrs["test_risk"], ds.attrs["accuracy"], ds.attrs["test_accuracy"]), (0.125, 0.75, 0.5))
        self.assertEqual(list(ds.attrs)[:5], ["risk", "norm_drift", "test_risk", "accuracy", "test_accuracy"])

        def ragged(f):
            del f["forward/depth"]
            f["forward/depth"] = np.array([0.0, 1.0])
        bad = self.copy("fwd.h5", "ragged.h5", ragged)
        one_line_error(self, lambda: mft.open_run(bad).forward_dataset(), bad, "5 depth rows", "has 2")

    def copy(self, source, name, change):
        path = str(self.tmp / name)
        shutil.copy(self.tmp / source, path)
        with h5py.File(path, "r+") as f:
            change(f)
        return path

    def test_ntk(self):
        path = str(self.tmp / "ntk.h5")
        with mft.open_run(path) as run:
            ds = run.ntk_dataset()
            config = run.config
        self.assertEqual(ds.gram.dims, ("row", "col"))
        self.assertEqual(ds.sizes["row"], 4)  # N d_out = 4 x 1
        gram = ds.gram.values
        np.testing.assert_array_equal(gram, gram.T)
        np.testing.assert_allclose(ds.eigenvalues.values, np.linalg.eigvalsh(gram), rtol=1e-10, atol=1e-12)
        self.assertEqual(ds.attrs["lambda_min"], ds.eigenvalues.values[0])
        self.assertEqual(ds.attrs["lambda_max"], ds.eigenvalues.values[-1])
        self.assertEqual((ds.attrs["part"], ds.attrs["snapshot"]), ("V", 0))
        np.testing.assert_array_equal(ds.row_sequence.values, [0, 1, 2, 3])
        # The CGF test: descending singular values, margin = smallest / largest,
        # points in the ball of radius cgf.radius.
        sv = ds.cgf_singular_values.values
        self.assertTrue(np.all(np.diff(sv) <= 0))
        self.assertAlmostEqual(ds.attrs["cgf_margin"], sv[-1] / sv[0], places=14)
        self.assertEqual(ds.cgf_points.dims, ("point", "coordinate"))
        self.assertEqual(ds.cgf_points.shape, (40, 3))
        self.assertLessEqual(float(np.sqrt((ds.cgf_points ** 2).sum("coordinate")).max()), config["cgf.radius"])
        # The kernel's report: K_V is the part asked for here; the rate bound
        # and Euler's limit as MODEL.md states them (N = 4 sequences).
        self.assertEqual(ds.attrs["kv_lambda_min"], ds.attrs["lambda_min"])
        self.assertEqual(ds.attrs["kv_positive_definite"], int(ds.attrs["kv_lambda_min"] > ds.attrs["kv_tolerance"]))
        self.assertIsInstance(ds.attrs["kv_positive_definite"], int)
        self.assertAlmostEqual(ds.attrs["rate_bound"], 2 * ds.attrs["kv_lambda_min"] / 4, places=14)
        self.assertGreaterEqual(ds.attrs["all_lambda_max"], ds.attrs["lambda_max"])
        self.assertAlmostEqual(ds.attrs["euler_dtau_max"] * ds.attrs["all_lambda_max"], 2 * 4, places=12)
        one_line_error(self, lambda: mft.open_run(path).forward_dataset(), path, "no /forward")

    def test_ntk_of_an_earlier_version(self):
        """A file written before the report: read without it."""
        report = ("kv_lambda_min", "kv_lambda_max", "kv_tolerance", "kv_positive_definite", "rate_bound",
                  "all_lambda_max", "euler_dtau_max", "risk")
        def older(f):
            for name in report:
                del f["ntk"].attrs[name]
            f["config"].attrs["output.file"] = "older.h5"  # as if written so
        path = self.copy("ntk.h5", "older.h5", older)
        with mft.open_run(path) as run:
            ds = run.ntk_dataset()
        for name in report:
            self.assertNotIn(name, ds.attrs)
        # open_runs takes the numeric results of runs without a history.
        with mft.open_run(str(self.tmp / "ntk.h5")) as run:
            rate = run.ntk_dataset().attrs["rate_bound"]
        both = mft_io.open_runs([str(self.tmp / "ntk.h5"), path], dims=["output.file"])
        self.assertEqual(list(both["output.file"].values), ["ntk.h5", "older.h5"])
        self.assertEqual(float(both.rate_bound.sel({"output.file": "ntk.h5"})), rate)
        self.assertTrue(np.isnan(float(both.rate_bound.sel({"output.file": "older.h5"}))))
        np.testing.assert_array_equal(both.lambda_min.values, [ds.attrs["lambda_min"]] * 2)


class OutputsOnWrittenFiles(unittest.TestCase):
    """Files written with h5py: a Gram of two outputs, damaged groups."""
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-outputs-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def test_gram_rows_of_two_outputs(self):
        path = str(self.tmp / "ntk2.h5")
        write_run(path, history=False)
        rng = np.random.default_rng(3)
        J = rng.standard_normal((10, 7))
        with h5py.File(path, "r+") as f:
            del f["data/targets"]
            f["data/targets"] = rng.standard_normal((5, 2))  # N = 5, d_out = 2
            f["ntk/gram"] = J @ J.T
            f["ntk/eigenvalues"] = np.linalg.eigvalsh(J @ J.T)
            f["ntk"].attrs.update({"part": "all", "snapshot": np.int64(20), "lambda_min": 0.0, "lambda_max": 1.0})
        with mft.open_run(path) as run:
            ds = run.ntk_dataset()
        np.testing.assert_array_equal(ds.row_sequence.values, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
        np.testing.assert_array_equal(ds.col_output.values, [0, 1] * 5)
        # Row (sequence 3, output 1) against column (sequence 0, output 0).
        entry = ds.gram.where((ds.row_sequence == 3) & (ds.row_output == 1) & (ds.col_sequence == 0)
                              & (ds.col_output == 0), drop=True)
        self.assertEqual(float(entry), (J @ J.T)[7, 0])
        self.assertEqual((ds.attrs["part"], ds.attrs["snapshot"]), ("all", 20))
        with h5py.File(path, "r+") as f:
            del f["ntk/eigenvalues"]
            f["ntk/eigenvalues"] = np.zeros(9)
        one_line_error(self, lambda: mft.open_run(path).ntk_dataset(), path, "/ntk/eigenvalues")

    def test_runs_without_the_group(self):
        path = str(self.tmp / "train.h5")
        write_run(path)
        with mft.open_run(path) as run:
            one_line_error(self, run.forward_dataset, path, "no /forward", "mft forward")
            one_line_error(self, run.ntk_dataset, path, "no /ntk", "mft ntk")

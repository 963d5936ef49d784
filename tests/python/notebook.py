"""mft.io as a notebook uses it: exceptions instead of exits, `with` and a
one-line repr, snapshots selected by step and tau, one Dataset of every
species, and the package's version against the C++ program's."""
import re
import shutil
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from fixtures import ROOT, write_run
import mft
from mft import io as mft_io


class Notebook(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-notebook-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.path = str(self.tmp / "run.h5")
        self.arrays, self.hist = write_run(self.path, M=3, L=2, d=4, d_h=2, S=3, T=5)

    def test_open_run_raises_instead_of_exiting(self):
        text = self.tmp / "notes.txt"
        text.write_text("not a run\n")
        other = self.tmp / "other.h5"
        with h5py.File(other, "w") as f:
            f["x"] = 1
        for path, words in ((self.tmp / "missing.h5", "no such file"), (text, "not an HDF5 file"),
                            (other, "not an mft run file")):
            with self.assertRaises(mft_io.RunFileError) as caught:  # not SystemExit
                mft.open_run(path)
            message = str(caught.exception)
            self.assertNotIn("\n", message)
            self.assertIn(str(path), message)
            self.assertIn(words, message)

    def test_with_and_repr(self):
        with mft.open_run(self.path) as run:
            self.assertIs(run.file.__bool__(), True)
            said = repr(run)
            for words in (self.path, "task icl-linear", "N=5, M=3, L=2, d=4", "3 snapshots (steps 0..20)",
                          "5 history rows"):
                self.assertIn(words, said)
        self.assertFalse(run.file)
        self.assertIn("(closed)", repr(run))
        with h5py.File(self.path, "r+") as f:  # a damaged history: the repr still prints
            f["history"].attrs["complete"] = np.int64(9)
        with mft.open_run(self.path) as run:
            self.assertIn("history damaged", repr(run))

    def test_select_by_step_and_tau(self):
        with mft.open_run(self.path) as run:
            V = run.particles_xarray("V")
            np.testing.assert_array_equal(V.sel(step=10).values, self.arrays["V"][1])
            tau = float(self.arrays["tau"][2])
            np.testing.assert_array_equal(V.sel(tau=tau + 1e-9, method="nearest").values, self.arrays["V"][2])
            np.testing.assert_array_equal(V.isel(snapshot=0).values, self.arrays["V"][0])
            self.assertEqual(V.dims, ("snapshot", "slice", "head", "row", "col"))
            with self.assertRaises(KeyError):
                V.sel(step=15)

    def test_dataset_of_every_species(self):
        with mft.open_run(self.path) as run:
            ds = run.particles_dataset()
        self.assertEqual(sorted(ds.data_vars), ["K", "Q", "V", "W1", "W2"])
        self.assertEqual(ds.attrs["file"], self.path)
        for name, a in self.arrays.items():
            if name in ("step", "tau"):
                continue
            self.assertEqual(ds[name].dims[:2] + ds[name].dims[3:], ("snapshot", "slice", f"{name}_row", f"{name}_col"))
            np.testing.assert_array_equal(ds[name].values, a)
            np.testing.assert_array_equal(ds[name].sel(step=20).values, a[2])
        self.assertEqual(ds.sizes["head"], 3)
        self.assertEqual(ds.sizes["neuron"], 5)
        self.assertEqual(ds["Q"].dims[2], "head")
        self.assertEqual(ds["W1"].dims[2], "neuron")

    def test_version_is_the_programs(self):
        cmake = (ROOT / "CMakeLists.txt").read_text()
        version = re.search(r"project\(mft VERSION (\S+)", cmake).group(1)
        self.assertEqual(mft.__version__, version)

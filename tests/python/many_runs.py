"""Many runs at once (mft.io.open_runs), the labels of runs by the keys
they differ in (plot_history's legend) and compare_runs' exact zero (run
with test_package.py): on four runs of the built mft (MFT, which ctest
sets), two widths by two seeds, and on files written here."""
import io
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import h5py
import numpy as np

from fixtures import mft_command, one_line_error, script, small, write_run
import mft
from mft import compare, history, runs
from mft import io as mft_io


def write_sweep_run(path, M, seed, T=5, **config):
    """A write_run file with init.seed = seed, model.heads = M (and `config`)."""
    write_run(path, M=M, seed=100 * M + seed, T=T)
    with h5py.File(path, "r+") as f:
        f["config"].attrs["init.seed"] = seed
        f["config"].attrs["output.file"] = os.path.basename(path)
        for key, value in config.items():
            f["config"].attrs[key] = value


@unittest.skipUnless(os.environ.get("MFT"), "needs the built mft (MFT; ctest sets it)")
class FourRuns(unittest.TestCase):
    """mft train at two widths and two seeds (a few steps on 4 sequences)."""
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="mft-runs-"))
        cls.paths = {}
        for M in (2, 3):
            for seed in (1, 2):
                name = f"sweep-{M}-{seed}.h5"
                mft_command(cls.tmp, "train", *small(model_heads=M, init_seed=seed, train_steps=3, output_file=name))
                cls.paths[M, seed] = str(cls.tmp / name)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def raw(self, M, seed, name):
        with h5py.File(self.paths[M, seed], "r") as f:
            return f["history/" + name][...]

    def test_final_measures(self):
        ds = mft_io.open_runs(str(self.tmp / "sweep-*.h5"))
        self.assertEqual(ds.risk.dims, ("model.heads", "init.seed"))
        np.testing.assert_array_equal(ds["model.heads"].values, [2, 3])
        np.testing.assert_array_equal(ds["init.seed"].values, [1, 2])
        self.assertEqual(list(ds.data_vars)[:6], ["step", "tau", "risk", "objective", "grad_norm", "wall_time"])
        for (M, seed), path in self.paths.items():
            cell = ds.sel({"model.heads": M, "init.seed": seed})
            self.assertEqual(float(cell.risk), self.raw(M, seed, "risk")[-1])
            self.assertEqual(float(cell.tau), self.raw(M, seed, "tau")[-1])
            self.assertEqual(int(cell.step), 3)
            self.assertEqual(str(cell.file.values), path)
        # Different seeds and widths train to different risks.
        self.assertEqual(len(set(ds.risk.values.ravel().tolist())), 4)
        # Keys all four share are attributes; the differing output.file is neither.
        self.assertEqual((ds.attrs["model.d"], ds.attrs["train.steps"]), (3, 3))
        for key in ("model.heads", "init.seed", "output.file"):
            self.assertNotIn(key, ds.attrs)
        self.assertNotIn("output.file", ds.dims)

    def test_step_and_history(self):
        at = mft_io.open_runs(list(self.paths.values()), step=1)
        self.assertEqual(float(at.risk.sel({"model.heads": 3, "init.seed": 2})), self.raw(3, 2, "risk")[1])
        one_line_error(self, lambda: mft_io.open_runs(list(self.paths.values()), step=9),
                       "no history row of step 9")
        full = mft_io.open_runs(list(self.paths.values()), history=True)
        self.assertEqual(full.risk.dims, ("model.heads", "init.seed", "step"))
        np.testing.assert_array_equal(full.step.values, [0, 1, 2, 3])
        for M, seed in self.paths:
            np.testing.assert_array_equal(full.risk.sel({"model.heads": M, "init.seed": seed}).values,
                                          self.raw(M, seed, "risk"))
        # Step 0: the same data, other particles at another width: other risks.
        self.assertNotEqual(float(full.risk.isel(step=0)[0, 0]), float(full.risk.isel(step=0)[1, 0]))

    def test_refusals(self):
        paths = list(self.paths.values())
        clash = str(self.tmp / "again.h5")
        shutil.copy(self.paths[2, 1], clash)
        self.addCleanup(os.remove, clash)
        one_line_error(self, lambda: mft_io.open_runs(paths + [clash]), self.paths[2, 1], clash,
                       "same coordinates", "model.heads=2, init.seed=1")
        one_line_error(self, lambda: mft_io.open_runs(paths, dims=["model.heads"]), "same coordinates",
                       "they differ in init.seed")
        text = self.tmp / "notes.h5"
        text.write_text("not a run\n")
        self.addCleanup(os.remove, text)
        one_line_error(self, lambda: mft_io.open_runs(paths + [str(text)]), text, "not an HDF5 file")
        one_line_error(self, lambda: mft_io.open_runs(str(self.tmp / "nothing-*.h5")), "no file matches")
        one_line_error(self, lambda: mft_io.open_runs(paths, dims=["model.heads", "no.such"]), "no.such")

    def test_labels(self):
        order = [(2, 1), (2, 2), (3, 1), (3, 2)]
        paths = [self.paths[k] for k in order]
        configs = [mft.open_run(p).config for p in paths]
        expected = ["M=2 seed=1", "M=2 seed=2", "M=3 seed=1", "M=3 seed=2"]
        self.assertEqual(history.default_labels(paths, configs), expected)
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        out = io.StringIO()
        with redirect_stdout(out):
            fig = history.plot_compare(paths, [mft.open_run(p).history for p in paths], expected,
                                       SimpleNamespace(output=str(self.tmp / "h.png"), fit=False, fit_from=None,
                                                       fit_to=None), plt)
        self.addCleanup(plt.close, fig)
        self.assertEqual([t.get_text() for t in fig.legends[0].get_texts()], expected)
        status, stdout, stderr = script("plot_history", *paths, "-o", self.tmp / "h2.png")
        self.assertEqual(status, 0, stderr)
        self.assertEqual([line.split("  ")[0] for line in stdout.splitlines()[1:5]], expected)

    def test_compare_runs_is_exactly_zero_on_a_copy(self):
        copy = str(self.tmp / "copy.h5")
        shutil.copy(self.paths[3, 2], copy)
        self.addCleanup(os.remove, copy)
        status, stdout, stderr = script("compare_runs", self.paths[3, 2], copy, self.paths[3, 1],
                                        "-o", self.tmp / "c.png")
        self.assertEqual(status, 0, stderr)
        rows = {tuple(line.split()[:2]): float(line.split()[2]) for line in stdout.splitlines()
                if line.startswith(" ") and "h5" in line}
        self.assertEqual(rows[("sweep-3-2.h5", "copy.h5")], 0.0)
        self.assertGreater(rows[("sweep-3-2.h5", "sweep-3-1.h5")], 0.0)


class RunsOnWrittenFiles(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-runs-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def test_missing_cell_and_string_key(self):
        paths = []
        for M, seed, method in ((2, 1, "flow"), (2, 2, "flow"), (4, 1, "adam")):
            paths.append(str(self.tmp / f"r{M}{seed}.h5"))
            write_sweep_run(paths[-1], M, seed, T=6, **{"train.method": method})
        # The method is a function of M here: a variable over (M, seed), not a dimension of its own.
        grid = mft_io.open_runs(paths)
        self.assertEqual(grid.risk.dims, ("model.heads", "init.seed"))
        self.assertEqual(grid["train.method"].sel({"model.heads": 4, "init.seed": 1}).item(), "adam")
        self.assertEqual(int(np.isnan(grid.risk.values).sum()), 1)  # 4 cells, 3 runs
        # Named, it is one: every combination of the three keys.
        ds = mft_io.open_runs(paths, dims=["model.heads", "train.method", "init.seed"])
        self.assertEqual(ds.risk.dims, ("model.heads", "train.method", "init.seed"))
        np.testing.assert_array_equal(ds["train.method"].values, ["adam", "flow"])
        cell = ds.sel({"model.heads": 4, "train.method": "adam", "init.seed": 1})
        with h5py.File(paths[2], "r") as f:
            self.assertEqual(float(cell.risk), f["history/risk"][-1])
            self.assertEqual(int(cell.step), 5)
        self.assertTrue(np.isnan(float(ds.risk.sel({"model.heads": 4, "train.method": "flow", "init.seed": 2}))))
        self.assertEqual(int(np.isnan(ds.risk.values).sum()), 5)  # 8 cells, 3 runs
        # Labels: the method leads when it differs, the seed comes last.
        configs = [mft.open_run(p).config for p in paths]
        self.assertEqual(runs.run_labels(configs), ["M=2 method=flow seed=1", "M=2 method=flow seed=2",
                                                    "M=4 method=adam seed=1"])
        self.assertEqual(history.default_labels(paths, configs), ["flow M=2 seed=1", "flow M=2 seed=2",
                                                                  "adam M=4 seed=1"])

    def test_tidy(self):
        """open_runs(tidy=True): one row per (run, history row), the keys
        that differ as columns (booleans as booleans), the run's status."""
        specs = ((2, 1, "true"), (2, 2, "false"), (4, 1, "true"))
        paths = []
        for M, seed, causal in specs:
            paths.append(str(self.tmp / f"t{M}{seed}.h5"))
            write_sweep_run(paths[-1], M, seed, T=6, **{"model.causal": causal})
        with h5py.File(paths[1], "r+") as f:
            f["history"].attrs["end"] = "diverged"
        with h5py.File(paths[2], "r+") as f:
            f["config"].attrs["train.steps"] = 50  # its history ends at step 5
        frame = mft_io.open_runs(paths, tidy=True)
        self.assertEqual(list(frame.columns[:7]),
                         ["file", "status", "model.causal", "model.heads", "train.steps", "init.seed", "step"])
        self.assertEqual(len(frame), 3 * 6)
        self.assertEqual(frame["model.causal"].dtype, bool)
        self.assertEqual(frame["model.heads"].dtype.kind, "i")
        by_file = frame.groupby("file", sort=False)
        self.assertEqual([g["status"].iat[0] for _, g in by_file], ["complete", "diverged", "stopped"])
        self.assertEqual([bool(g["model.causal"].iat[0]) for _, g in by_file], [True, False, True])
        for path, (_, group) in zip(paths, by_file):
            with h5py.File(path, "r") as f:
                np.testing.assert_array_equal(group["step"].to_numpy(), f["history/step"][...])
                np.testing.assert_array_equal(group["risk"].to_numpy(), f["history/risk"][...])
        # one step: a row per run
        last = mft_io.open_runs(paths, tidy=True, step=5)
        self.assertEqual((len(last), list(last["step"])), (3, [5, 5, 5]))
        # diverged in its first step, before any history row: diverged, not complete or failed
        first = str(self.tmp / "first.h5")
        write_sweep_run(first, 8, 1, T=6)
        with h5py.File(first, "r+") as f:
            for name in list(f["history"]):
                del f["history"][name]
                f["history"].create_dataset(name, shape=(0,), dtype="f8")
            f["history"].attrs.update({"complete": 0, "end": "diverged", "end_error": "training step 0: boom"})
        frame = mft_io.open_runs([paths[0], first], tidy=True)
        self.assertEqual(frame.groupby("file", sort=False)["status"].first().tolist(), ["complete", "diverged"])
        from mft import sweep
        row = sweep.collect([first]).iloc[0]
        self.assertEqual((row["status"], row["M"], row["steps"]), ("diverged", 8, 0))
        self.assertTrue(np.isnan(row["R"]))
        self.assertEqual(sweep.why_failed(first), "diverged at step 0 of 5: training step 0: boom")

    def test_labels_of_runs_that_agree(self):
        a, b = str(self.tmp / "a.h5"), str(self.tmp / "b.h5")
        write_sweep_run(a, 3, 1)
        write_sweep_run(b, 3, 1)
        configs = [mft.open_run(p).config for p in (a, b)]
        self.assertEqual(runs.differing_keys(configs), [])  # output.file differs but says nothing
        self.assertEqual(history.default_labels([a, b], configs), ["flow (a.h5)", "flow (b.h5)"])
        one_line_error(self, lambda: mft_io.open_runs([a, b]), a, b, "same coordinates", "init.seed=1",
                       "configurations are the same")
        # Two keys of one name within their sections are named in full.
        with h5py.File(b, "r+") as f:
            f["config"].attrs["data.seed"] = 5
            f["config"].attrs["init.seed"] = 2
        with h5py.File(a, "r+") as f:
            f["config"].attrs["data.seed"] = 4
        configs = [mft.open_run(p).config for p in (a, b)]
        self.assertEqual(runs.run_labels(configs), ["data.seed=4 init.seed=1", "data.seed=5 init.seed=2"])

    def test_compare_is_exactly_zero_for_the_same_heads(self):
        a = str(self.tmp / "a.h5")
        arrays, _ = write_run(a, M=24, L=2, d=6, d_h=4, S=2, mlp=False)
        p = {name: arrays[name][-1] for name in ("Q", "K", "V")}
        self.assertEqual(compare.conditional_w2_squared(p, {k: v.copy() for k, v in p.items()}), 0.0)
        order = np.random.default_rng(1).permutation(24)
        permuted = {k: v[:, order] for k, v in p.items()}
        self.assertEqual(compare.conditional_w2_squared(p, permuted), 0.0)
        # |x|^2 + |y|^2 - 2<x, y> leaves a rounding error on the same pairs:
        x = compare.flatten_heads(p, 0)
        y = compare.flatten_heads(permuted, 0)
        naive = (x ** 2).sum(1)[:, None] + (y ** 2).sum(1)[None, :] - 2 * x @ y.T
        self.assertGreater(np.abs(naive[order, np.arange(24)]).max(), 0.0)
        self.assertEqual(np.abs(compare.squared_distances(x, y)[order, np.arange(24)]).max(), 0.0)
        # A translation of slice 0's V by 0.5 in each of its d^2 entries: W2^2 = 0.25 d^2 there, 0 in slice 1.
        shifted = dict(p, V=p["V"].copy())
        shifted["V"][0] += 0.5
        self.assertAlmostEqual(compare.conditional_w2_squared(p, shifted), 0.25 * 36 / 2, places=11)
        # Widths that differ: each head of the narrow run twice in the wide one is the same measure.
        doubled = {k: np.concatenate([v, v], axis=1) for k, v in p.items()}
        self.assertAlmostEqual(compare.conditional_w2_squared(p, doubled), 0.0, places=14)

        b = str(self.tmp / "b.h5")
        shutil.copy(a, b)
        status, stdout, stderr = script("compare_runs", a, b, "-o", self.tmp / "c.png")
        self.assertEqual(status, 0, stderr)
        row = next(line.split() for line in stdout.splitlines() if line.split()[:2] == ["a.h5", "b.h5"])
        self.assertEqual(float(row[2]), 0.0)

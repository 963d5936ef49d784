"""Damaged run files and hostile sweep tables (run by test_package.py):
rows past the complete ones are never shown, counts that contradict the
datasets are refused in one line, by the reader and by the scripts (exit
status, one stderr line, no traceback); sweep tables with a NUL or another
control byte, a byte-order mark, an unknown or reserved key, a FIFO, a cell
past 64 KiB.
"""
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from fixtures import ENV, KEYS, PYTHON, SCRIPTS, changed_copy, grow, script, stand_in_mft, write_run
from mft import io as mft_io
from mft import sweep


class DamagedRun(unittest.TestCase):
    """A file of 3 complete snapshots and 5 complete history rows, then a
    snapshot cut short (a zero row in some datasets only) and a history row
    in some columns only; Q has lost its `species` attribute."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="mft-damaged-"))
        cls.path = str(cls.tmp / "cut.h5")
        cls.arrays, cls.hist = write_run(cls.path, S=3, T=5, mlp=False)
        with h5py.File(cls.path, "r+") as f:
            for name in ("K", "V"):
                f["particles/" + name].attrs["species"] = "heads"
            f["optimizer/t"] = np.arange(3, dtype=np.int64) + 1
            f["optimizer/m_Q"] = 0.5 * cls.arrays["Q"]
            for name in ("particles/step", "particles/tau", "particles/Q", "optimizer/t", "optimizer/m_Q",
                         "history/risk", "history/step"):
                grow(f, name, 1)
            f["particles"].attrs["complete"] = np.int64(3)
            f["history"].attrs["complete"] = np.int64(5)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def variant(self, name, change):
        return changed_copy(self.path, self.tmp, name, change)

    def refused(self, path, *words, read=lambda run: run.particles(0)):
        run = mft_io.open_run(path)
        self.addCleanup(run.close)
        with self.assertRaises(mft_io.RunFileError) as caught:
            read(run)
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        for w in (path,) + words:
            self.assertIn(w, message)

    def test_rows_past_complete_are_not_shown(self):
        run = mft_io.open_run(self.path)
        self.addCleanup(run.close)
        np.testing.assert_array_equal(run.snapshot_steps, self.arrays["step"])
        np.testing.assert_array_equal(run.snapshot_taus, self.arrays["tau"])
        self.assertEqual(run.snapshot_count, 3)
        self.assertEqual(list(run.species), ["Q", "K", "V"])  # Q untagged among tagged K, V
        for index, row in ((-1, 2), (2, 2), (-3, 0)):
            np.testing.assert_array_equal(run.particles(index)["Q"], self.arrays["Q"][row])
            np.testing.assert_array_equal(run.optimizer_state(index)["m"]["Q"], 0.5 * self.arrays["Q"][row])
            self.assertEqual(run.optimizer_state(index)["t"], row + 1)
        self.assertEqual(run.snapshot_index(0), 0)  # the zero row has step 0 too
        self.assertEqual(run.particles_xarray("Q").shape[0], 3)
        for index in (3, -4):
            with self.assertRaises(mft_io.RunFileError) as caught:
                run.particles(index)
            self.assertIn("0 to 2, or -3 to -1", str(caught.exception))
        hist = run.history
        self.assertEqual({k: len(v) for k, v in hist.items()}, {k: 5 for k in self.hist})
        np.testing.assert_array_equal(hist["risk"], self.hist["risk"])
        self.assertEqual(len(run.history_frame()), 5)

        status, out, err = script("plot_particles", self.path, "-o", self.tmp / "p.png")
        self.assertEqual(status, 0, err)
        self.assertIn("snapshots [0, 10, 20]", out)  # the complete snapshots, not the rows past them
        status, out, err = script("plot_history", self.path, "-o", self.tmp / "h.png")
        self.assertEqual(status, 0, err)
        self.assertIn("5 history rows", out)

    def test_damaged_counts_are_refused(self):
        def complete(value):
            return lambda f: f["particles"].attrs.__setitem__("complete", value)
        for name, value in (("beyond", np.int64(5)), ("negative", np.int64(-1)), ("real", 2.5), ("text", "3")):
            self.refused(self.variant(f"{name}.h5", complete(value)), "damaged", "complete")
        self.refused(self.variant("four.h5", complete(np.int64(4))), "/particles/K, /particles/V: 3 rows",
                     read=lambda run: run.snapshot_steps)

        def short_optimizer(f):
            del f["optimizer/t"]
            f["optimizer/t"] = np.arange(2)
        self.refused(self.variant("optimizer.h5", short_optimizer), "/optimizer/t: 2 rows")

        def older(f):  # no attribute: the rows must agree
            del f["particles"].attrs["complete"]
        self.refused(self.variant("older.h5", older), "/particles/K, /particles/V: 3 rows", "/particles/Q",
                     read=lambda run: run.snapshot_taus)
        path = str(self.tmp / "agreeing.h5")
        write_run(path, S=2)
        run = mft_io.open_run(path)
        self.addCleanup(run.close)
        self.assertEqual(len(run.snapshot_steps), 2)
        self.assertEqual(run.particles(-1)["W1"].shape[0], 2)

    def test_damaged_history_is_refused(self):
        def ragged(f):
            del f["history"].attrs["complete"]
        path = self.variant("ragged.h5", ragged)
        self.refused(path, "ragged /history", "/history/risk, /history/step: 6 rows", ": 5 rows",
                     read=lambda run: run.history_frame())
        self.refused(self.variant("long.h5", lambda f: f["history"].attrs.__setitem__("complete", np.int64(6))),
                     "/history.complete is 6", "5 rows", read=lambda run: run.history)

        def matrix(f):
            f["history/extra"] = np.zeros((5, 2))
        self.refused(self.variant("matrix.h5", matrix), "/history/extra", "shape (5, 2)", read=lambda run: run.history)

        # The scripts: one line, no traceback, also for errors found after open_run.
        def no_q(f):
            del f["particles/Q"]
        beyond = self.variant("beyond.h5", lambda f: f["particles"].attrs.__setitem__("complete", np.int64(9)))
        for name, args, word in (
                ("plot_history", [path], "ragged"),
                ("plot_history", [self.path, path], "ragged"),
                ("collect_sweep", [path], "ragged"),
                ("plot_particles", [beyond], "damaged"),
                ("plot_particles", [self.variant("noq.h5", no_q)], "no particle dataset Q"),
                ("plot_particles", [self.path, "--snapshots", "0,3"], "0 to 2"),
                ("compare_runs", [self.path, beyond], "damaged")):
            status, out, err = script(name, *args, "-o" if name != "collect_sweep" else "--csv", self.tmp / "x")
            self.assertNotEqual(status, 0, (name, args))
            self.assertNotIn("Traceback", err)
            self.assertEqual(len(err.splitlines()), 1, (name, err))
            self.assertTrue(err.startswith("error: ") and word in err, (name, err))


class HostileSweepTable(unittest.TestCase):
    """Tables that would smuggle options into a task, fail every task, or
    block the reader: refused in one line naming the table, the line and the
    column."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-hostile-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.keys = self.tmp / "keys.txt"
        self.keys.write_text("\n".join(KEYS) + "\n")

    def table(self, data, name):
        path = self.tmp / name
        path.write_bytes(data)
        return str(path)

    def cli(self, *args, stdin=None):
        """python3 -m mft.sweep ARGS: (exit status, stdout, stderr lines)."""
        done = subprocess.run([PYTHON, "-m", "mft.sweep", *args], env=ENV, capture_output=True, input=stdin,
                              timeout=20, cwd=self.tmp)
        return done.returncode, done.stdout, done.stderr.decode().splitlines()

    def assert_refused(self, args, *words):
        status, out, err = self.cli(*args)
        self.assertEqual((status, out), (2, b""), (args, err))
        self.assertEqual(len(err), 1, err)
        for w in ("error: ", args[1]) + words:
            self.assertIn(w, err[0])

    def test_control_bytes(self):
        nul = self.table(b'model.heads,readout.weights\n4,"0.5\x00--output.file"\n', "nul.csv")
        self.assert_refused(("args", nul, "0"), "row 0 (line 2)", "column readout.weights", "NUL")
        esc = self.table(b"model.heads,model.slices\n# fine\n4,2\x1b[2J\n", "esc.csv")
        self.assert_refused(("count", esc), "row 0 (line 3)", "column model.slices", "U+001B")
        self.assert_refused(("args", self.table(b"model.heads,mo\x07del.slices\n4,2\n", "bell.csv"), "0"),
                            "the header (line 1)", "column 2")
        self.assert_refused(("count", self.table(b"model.heads\n# a \x00 comment\n4\n", "c.csv")), "line 2")
        # tab inside a cell, CR LF line ends: still fine
        tab = self.table(b'model.heads,readout.weights\r\n4,"1,\t2"\r\n', "tab.csv")
        self.assertEqual(sweep.sweep_args(tab, 0), ["--model.heads", "4", "--readout.weights", "1,\t2"])

    def test_cell_sizes(self):
        """At most sweep.CELL_LIMIT bytes (64 KiB) a cell: past it (and past
        csv's own limit) refused naming the row and column."""
        limit = sweep.CELL_LIMIT
        for size in (limit + 1, 5 * 2**20):
            big = self.table(b"model.heads,readout.weights\n4,2\n4,\"" + b"1," * (size // 2) + b"\"\n", "big.csv")
            self.assert_refused(("count", big), "row 1 (line 3)", "column readout.weights",
                                f"{size // 2 * 2 + 2} bytes", "64 KiB")
        key = self.table(b"model.heads," + b"k" * (limit + 1) + b"\n4,2\n", "key.csv")
        self.assert_refused(("args", key, "0"), "the header (line 1)", "column 2")
        fits = self.table(b"model.heads,readout.weights\n4,\"" + b"1" * (limit - 2) + b"\"\n", "fits.csv")
        self.assertEqual(len(sweep.sweep_rows(fits)[0]["readout.weights"]), limit - 2)

    def test_byte_order_mark(self):
        bom = self.table(b"\xef\xbb\xbfmodel.heads,model.slices\r\n4,2\r\n", "bom.csv")
        status, out, err = self.cli("args", bom, "0")
        self.assertEqual((status, out.split(b"\0")), (0, [b"--model.heads", b"4", b"--model.slices", b"2", b""]), err)

    def test_keys_checked(self):
        good = self.table(b"\xef\xbb\xbfmodel.heads,readout.weights\n4,\"0.5,0.25\"\n8,1\n", "good.csv")
        self.assertEqual(self.cli("check", good, "--keys-from", str(self.keys))[:2], (0, b"2\n"))
        self.assertEqual(self.cli("check", good, "--keys-from", "-", stdin=self.keys.read_bytes())[:2], (0, b"2\n"))
        # with mft: every row as it will run, then the count
        mft = stand_in_mft(self.tmp / "build")
        status, out = self.cli("check", good, "--mft", mft)[:2]
        self.assertEqual((status, out.splitlines()[-1], len(out.splitlines())), (0, b"rows: 2", 3))
        bad = self.table(b"model.heads,model.slice\n4,2\n", "bad.csv")
        self.assert_refused(("check", bad, "--keys-from", str(self.keys)), "line 1", "column 2", "'model.slice'",
                            "did you mean model.slices")
        self.assert_refused(("check", bad, "--mft", mft), "model.slice")
        with self.assertRaises(sweep.SweepTableError):
            sweep.check_table(bad, set(KEYS))
        # output.file is set by each task: refused at submission and in the task
        out = self.table(b"model.heads,output.file\n4,x.h5\n", "out.csv")
        self.assert_refused(("check", out, "--keys-from", str(self.keys)), "output.file", "column 2")
        self.assert_refused(("args", out, "0"), "output.file")
        # a key list that is not one, an mft that has no --keys
        status, _, err = self.cli("check", good, "--keys-from", str(self.tmp / "none.txt"))
        self.assertEqual((status, len(err)), (2, 1), err)
        status, _, err = self.cli("check", good, "--mft", str(SCRIPTS / "env.sh"))
        self.assertEqual((status, len(err)), (2, 1), err)
        self.assertEqual(self.cli("check", good)[0], 2)

    def test_keys_of_the_built_mft(self):
        """The example table against the keys of the mft under test ($MFT)."""
        program = os.environ.get("MFT")
        if not program or not os.path.exists(program):
            self.skipTest("no mft program (MFT)")
        env = dict(ENV, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")  # as scripts/env.sh
        done = subprocess.run([program, "--keys"], capture_output=True, text=True, timeout=60, env=env)
        if done.returncode != 0:
            self.skipTest(f"{program} has no --keys")
        for key in ("model.heads", "model.slices", "readout.weights", "train.steps"):
            self.assertIn(key, done.stdout.split())
        table = str(SCRIPTS.parent / "examples" / "sweep-heads-slices.csv")
        done = subprocess.run([PYTHON, "-m", "mft.sweep", "check", table, "--mft", program], env=env,
                              capture_output=True, timeout=120)
        self.assertEqual((done.returncode, done.stdout.splitlines()[-1]), (0, b"rows: 4"), done.stderr)

    def test_only_regular_files(self):
        fifo = self.tmp / "fifo.csv"
        os.mkfifo(fifo)
        for args in (("count", str(fifo)), ("args", str(fifo), "0"), ("check", str(fifo), "--keys-from", "-")):
            self.assert_refused(args, "a FIFO")
        self.assert_refused(("count", str(self.tmp)), "a folder")
        self.assert_refused(("count", "/dev/null"), "a device")
        # submit_sweep.sh: refused before any submission, and before mft runs
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        (bin_dir / "sbatch").write_text("#!/usr/bin/env bash\necho submitted >&2\nexit 1\n")
        (bin_dir / "sbatch").chmod(0o755)
        stand_in_mft(self.tmp / "build")
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}", MFT_BUILD=str(self.tmp / "build"))
        unknown = self.table(b"model.heads,model.slice\n4,2\n", "unknown.csv")
        for table, word in ((fifo, "not a regular file"), (unknown, "model.slice"), (self.tmp / "no.csv", "no table")):
            done = subprocess.run(["bash", str(SCRIPTS / "slurm" / "submit_sweep.sh"), str(table)], env=env,
                                  capture_output=True, text=True, timeout=30, cwd=self.tmp)
            self.assertEqual(done.returncode, 2, (table, done.stderr))
            self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
            self.assertIn(word, done.stderr)
        env["MFT_BUILD"] = str(self.tmp / "nobuild")
        good = self.table(b"model.heads\n4\n", "good.csv")
        done = subprocess.run(["bash", str(SCRIPTS / "slurm" / "submit_sweep.sh"), good], env=env,
                              capture_output=True, text=True, timeout=30, cwd=self.tmp)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("no mft program", done.stderr)

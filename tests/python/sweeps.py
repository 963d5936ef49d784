"""Sweeps as users write them: the grid of values (mft-sweep grid), the
table's settings (a base configuration and options for every row), the
check of every row by mft's own dry run before anything runs, a sweep run
on this machine (python3 -m mft.sweep run) with the built mft, a row that
diverges among them, the collection that reports the tasks that did not
finish (which the Slurm collect job runs after any end of the array), its
columns (swept keys, seed, held-out risk, status) and figure (the mean over
seeds with a band, a panel per swept key), the Python the tools run under
($MFT_PYTHON), and the Slurm submission with its site options."""
import csv
import io
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from fixtures import ENV, PYTHON, SCRIPTS, stand_in_mft, write_run
from mft import sweep, sweep_grid, sweep_plot

# A run small enough for a test: the base configuration of the sweeps here.
BASE = "[data]\nsequences = 6\ntokens = 5\ntest_sequences = 3\n[model]\nslices = 2\n[train]\ndtau = 0.01\n"


def command(cwd, *args, env=ENV, timeout=600):
    return subprocess.run([PYTHON, "-m", "mft.sweep", *map(str, args)], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


class Grid(unittest.TestCase):
    """mft-sweep grid and freeze, and the settings of a table."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-grid-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        (self.tmp / "run.ini").write_text(BASE)

    def test_product_and_ranges(self):
        done = command(self.tmp, "grid", "model.heads=2,4,8,16", "init.seed=1:3", "--base", "run.ini",
                       "--args", "--train.steps 50", "-o", "t.csv", "--", "--train.dtau", "0.5")
        self.assertEqual(done.returncode, 0, done.stderr)
        table = str(self.tmp / "t.csv")
        rows = sweep.sweep_rows(table)
        self.assertEqual([(r["model.heads"], r["init.seed"]) for r in rows],
                         [(m, s) for m in ("2", "4", "8", "16") for s in ("1", "2", "3")])
        self.assertEqual(sweep.table_settings(table)["base"], str(self.tmp / "run.ini"))  # absolute
        self.assertEqual(sweep.sweep_args(table, 4), ["--config", str(self.tmp / "run.ini"), "--model.heads", "4",
                                                      "--init.seed", "2", "--train.steps", "50", "--train.dtau",
                                                      "0.5"])
        self.assertEqual(sweep_grid.parse_axis("train.steps=100:400:100,7")[1], ["100", "200", "300", "400", "7"])
        self.assertEqual(sweep_grid.parse_axis('readout.weights="0.5,0.25", "1,0"')[1], ["0.5,0.25", "1,0"])
        keys, rows = sweep_grid.composed(["a=1,2", "b=x", "c=5,6"])
        self.assertEqual(rows, [["1", "x", "5"], ["1", "x", "6"], ["2", "x", "5"], ["2", "x", "6"]])
        # Blocks joined by +, a key a block lacks empty (its default); zip pairs values one to one.
        keys, rows = sweep_grid.composed(["model.heads=4,8 init.seed=1:2", "+",
                                          "model.attention=relu init.sigma_qk=0.1 init.seed=1:2"])
        self.assertEqual(keys, ["model.heads", "init.seed", "model.attention", "init.sigma_qk"])
        self.assertEqual(rows, [["4", "1", "", ""], ["4", "2", "", ""], ["8", "1", "", ""], ["8", "2", "", ""],
                                ["", "1", "relu", "0.1"], ["", "2", "relu", "0.1"]])
        keys, rows = sweep_grid.composed(["a=1,2,3", "zip", "b=x,y,z", "c=5,6"])
        self.assertEqual((keys, rows[:3]), (["a", "b", "c"], [["1", "x", "5"], ["1", "x", "6"], ["2", "y", "5"]]))
        self.assertEqual(len(rows), 6)
        self.assertEqual(sweep_grid.composed(['w="0.5,0.25", "1,0"', "s=,0.1"])[1],
                         [["0.5,0.25", ""], ["0.5,0.25", "0.1"], ["1,0", ""], ["1,0", "0.1"]])
        done = command(self.tmp, "grid", "model.heads=4,8 init.seed=1:2", "+",
                       "model.attention=relu init.sigma_qk=0.1 init.seed=1:2", "-o", "u.csv")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(len(sweep.sweep_rows(str(self.tmp / "u.csv"))), 6)
        self.assertEqual(sweep.sweep_args(str(self.tmp / "u.csv"), 4),
                         ["--init.seed", "1", "--model.attention", "relu", "--init.sigma_qk", "0.1"])
        # to stdout, a quoted value read back whole
        done = command(self.tmp, "grid", 'readout.weights="0.5,0.25",1')
        self.assertEqual(done.stdout.splitlines()[1:], ["readout.weights", '"0.5,0.25"', "1"])
        for bad, word in (("a=3:1", "empty"), ("a=1,1", "twice"), ("a=,", "twice"), ("a", "KEY=VALUES"),
                          ("output.file=x", "may not set"), ('a="1', "quote"), ("a=1,2 zip b=1", "zip pairs"),
                          ("zip a=1", "two sides"), ("a=1 + a=1", "one run"), ("a=1 +", "empty block")):
            done = command(self.tmp, "grid", bad, "-o", "bad.csv")
            self.assertEqual(done.returncode, 2, bad)
            self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
            self.assertIn(word, done.stderr)
        self.assertFalse((self.tmp / "bad.csv").exists())
        for args, word in ((["a=1", "a=2"], "twice"), (["a=1", "--base", "none.ini"], "none.ini"),
                           (["a=1", "--", "--output.file", "x.h5"], "--output.file"),
                           (["a=1", "--args", "--restart x.h5"], "--restart"),
                           (["a=1:1000000000000000000"], "at most 100000 rows"),   # refused before expanding
                           (["a=1:1000", "b=1:1000"], "1000 x 1000 = 1000000 combinations")):
            done = command(self.tmp, "grid", *args)
            self.assertEqual((done.returncode, done.stdout), (2, ""), args)
            self.assertIn(word, done.stderr)

    def test_settings(self):
        t = self.tmp / "s.csv"
        t.write_text("# a comment\n#: base = run.ini\n#: args = --train.steps 3 'x y'\nmodel.heads\n2\n")
        self.assertEqual(sweep.sweep_args(str(t), 0), ["--config", str(self.tmp / "run.ini"), "--model.heads", "2",
                                                       "--train.steps", "3", "x y"])
        self.assertEqual(sweep.sweep_rows(str(t)), [{"model.heads": "2"}])
        for text, word in (("#: bse = x\na\n1\n", "no setting"), ("#: base = a\n#: base = b\na\n1\n", "again"),
                           ("#: args = --output.file y\na\n1\n", "output.file"), ("#: args = 'x\na\n1\n", "args")):
            t.write_text(text)
            with self.assertRaises(sweep.SweepTableError) as caught:
                sweep.sweep_rows(str(t))
            self.assertIn(word, str(caught.exception))
            self.assertIn("line", str(caught.exception))
        # freeze: the settings given on the command line written in, the rows as they were
        t.write_text("#: args = --train.steps 3\nmodel.heads,readout.weights\n2,\"1,2\"\n")
        done = command(self.tmp, "freeze", t, "-o", "f.csv", "--base", "run.ini", "--args", "--train.dtau 0.1")
        self.assertEqual(done.returncode, 0, done.stderr)
        frozen = str(self.tmp / "f.csv")
        self.assertEqual(sweep.sweep_args(frozen, 0), ["--config", str(self.tmp / "run.ini"), "--model.heads", "2",
                                                       "--readout.weights", "1,2", "--train.steps", "3",
                                                       "--train.dtau", "0.1"])
        t.write_text("#: base = other.ini\nmodel.heads\n2\n")
        done = command(self.tmp, "freeze", t, "-o", "f.csv", "--base", "run.ini")
        self.assertEqual(done.returncode, 2)
        self.assertIn("another", done.stderr)


class Check(unittest.TestCase):
    """mft-sweep check: mft's dry run of every row, before anything runs."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-check-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        (self.tmp / "run.ini").write_text(BASE)
        (self.tmp / "bad.csv").write_text("# heads\nmodel.heads,init.seed\n2,1\nx,1\n2,2\n")

    def assert_refused(self, done, program_words=()):
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        lines = done.stderr.splitlines()
        self.assertEqual(len(lines), 1, lines)
        for word in ("bad.csv", "row 1 (line 4)", "mft: error: model.heads = x: not an integer") + program_words:
            self.assertIn(word, lines[0])

    def test_stand_in(self):
        mft = stand_in_mft(self.tmp / "build")
        done = command(self.tmp, "check", "bad.csv", "--mft", mft, "--base", "run.ini", "--", "--train.steps", "2")
        self.assert_refused(done)
        calls = (self.tmp / "build" / "apps" / "dry-runs.log").read_text().splitlines()  # in any order
        self.assertTrue(any(c.startswith("train --dry-run --config run.ini --model.heads 2 --init.seed 1 "
                                         "--train.steps 2 --output.file") for c in calls), calls)
        good = self.tmp / "good.csv"
        good.write_text("model.heads,init.seed\n2,1\n3,1\n")
        done = command(self.tmp, "check", good, "--mft", mft, "--args", "--train.steps 2")
        self.assertEqual((done.returncode, done.stdout),
                         (0, "row 0 (line 2): model.heads = 2, init.seed = 1\n"
                             "row 1 (line 3): model.heads = 3, init.seed = 1\n"
                             "every row: --train.steps 2\nrows: 2\n"), done.stderr)
        # a composed grid's rows as they will run, an empty cell the key's default
        grid = command(self.tmp, "grid", "model.heads=4,8", "init.seed=1:2", "+",
                       "model.attention=relu", "init.sigma_qk=0.1", "init.seed=1:2", "-o", "composed.csv")
        self.assertEqual(grid.returncode, 0, grid.stderr)
        done = command(self.tmp, "check", "composed.csv", "--mft", mft, "--base", "run.ini")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual([line.split(": ", 1)[1] for line in done.stdout.splitlines()[:6]], [
            f"model.heads = {m}, init.seed = {s}, model.attention = default, init.sigma_qk = default"
            for m in (4, 8) for s in (1, 2)] + [
            f"model.heads = default, init.seed = {s}, model.attention = relu, init.sigma_qk = 0.1" for s in (1, 2)])
        self.assertEqual(done.stdout.splitlines()[6:], ["every row: --config run.ini", "rows: 6"])

    @unittest.skipUnless(os.environ.get("MFT"), "needs the built mft (MFT; ctest sets it)")
    def test_built_mft(self):
        done = command(self.tmp, "check", "bad.csv", "--mft", os.environ["MFT"], "--base", "run.ini")
        self.assert_refused(done)
        # without --mft: the program env.sh finds ($MFT here)
        self.assert_refused(command(self.tmp, "check", "bad.csv", "--base", "run.ini"))
        # run: refused by the same check before any row runs
        done = command(self.tmp, "run", "bad.csv", "--mft", os.environ["MFT"], "--base", "run.ini", "--ranks", "1",
                       "--name", "b")
        self.assert_refused(done)
        self.assertIn("nothing was run", done.stderr)
        self.assertEqual(list((self.tmp / "runs").iterdir()), [])
        # a value mft refuses in the options for every row, and a key given twice
        good = self.tmp / "good.csv"
        good.write_text("model.heads\n2\n")
        done = command(self.tmp, "check", good, "--mft", os.environ["MFT"], "--", "--train.steps", "-3")
        self.assertEqual(done.returncode, 2)
        self.assertIn("row 0 (line 2): mft: error: train.steps", done.stderr)
        done = command(self.tmp, "check", good, "--mft", os.environ["MFT"], "--", "--model.heads", "3")
        self.assertIn("given more than once", done.stderr)


class Python(unittest.TestCase):
    """The Python the tools run under: MFT_PYTHON for the collection, and
    one that lacks a module refused before the first run."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-python-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        (self.tmp / "t.csv").write_text("model.heads\n2\n")

    def python(self, name, body):
        path = self.tmp / name
        path.write_text(f"#!/usr/bin/env bash\n{body}\n")
        path.chmod(0o755)
        return str(path)

    def test_lacking(self):
        # No site packages (-S): no numpy, h5py, pandas, matplotlib where they come from a distribution.
        bare = self.python("bare", f'exec {sys.executable} -S "$@"')
        if subprocess.run([bare, "-c", "import numpy"], capture_output=True).returncode == 0:
            self.skipTest("numpy imports without site packages here")
        mft = stand_in_mft(self.tmp / "build")
        done = command(self.tmp, "run", "t.csv", "--mft", mft, "--ranks", "1", env=dict(ENV, MFT_PYTHON=bare))
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
        self.assertIn(f"{bare} cannot import numpy, h5py", done.stderr)
        self.assertIn("MFT_PYTHON", done.stderr)
        self.assertFalse((self.tmp / "build" / "apps" / "dry-runs.log").exists(), "mft ran before the refusal")
        self.assertEqual(list((self.tmp / "runs").iterdir()), [])
        done = command(self.tmp, "check", "t.csv", "--mft", mft, env=dict(ENV, MFT_PYTHON=bare))
        self.assertEqual(done.returncode, 2)
        self.assertIn("cannot import", done.stderr)
        # the collection itself, under a Python that lacks them
        done = subprocess.run([bare, "-m", "mft.sweep", "collect", "x.h5"], env=ENV, cwd=self.tmp,
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertNotIn("Traceback", done.stderr)
        self.assertIn("cannot import numpy, h5py, pandas", done.stderr)

    @unittest.skipUnless(os.environ.get("MFT"), "needs the built mft (MFT; ctest sets it)")
    def test_collects_under_mft_python(self):
        marker = self.tmp / "used"
        python = self.python("python", f'echo "$*" >>{marker}\nexec {sys.executable} "$@"')
        (self.tmp / "t.csv").write_text("model.heads,data.sequences,data.tokens,train.steps\n2,4,5,2\n")
        done = command(self.tmp, "run", "t.csv", "--mft", os.environ["MFT"], "--ranks", "1",
                       env=dict(ENV, MFT_PYTHON=python))
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        used = marker.read_text()
        self.assertIn("-m mft.sweep collect runs/sweep-local-0.h5 --table t.csv --report-failed", used)


class LocalCommand(unittest.TestCase):
    """Rows run at once bind no rank to a core (Open MPI binds every job's
    rank 0 to core 0: they would share it); one row at a time keeps Open
    MPI's binding, and a binding the user set wins."""

    def test_binding(self):
        import argparse
        from mft import sweep_run

        def line(jobs):
            args = argparse.Namespace(ranks=1, jobs=jobs, mft="mft")
            return sweep_run.command(args, ["--model.heads", "2"], "out.h5", "out.log")
        self.assertIn("OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none} exec ",
                      line(2))
        self.assertNotIn("binding_policy", line(1))
        shell = line(2).split(" exec ")[0].split("&& ")[-1]
        for given, expected in ((None, "none"), ("core", "core")):
            env = {k: v for k, v in os.environ.items() if k != "OMPI_MCA_hwloc_base_binding_policy"}
            if given:
                env["OMPI_MCA_hwloc_base_binding_policy"] = given
            done = subprocess.run(["bash", "-c", shell + ' printenv OMPI_MCA_hwloc_base_binding_policy'],
                                  env=env, capture_output=True, text=True)
            self.assertEqual(done.stdout.strip(), expected)


@unittest.skipUnless(os.environ.get("MFT"), "needs the built mft (MFT; ctest sets it)")
class LocalSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-sweep-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def sweep(self, *args):
        return command(self.tmp, *args)

    def test_run_and_collect(self):
        full = self.tmp / "table.csv"
        full.write_text("# two runs and one that diverges\n"
                        "model.heads,train.dtau,data.sequences,data.tokens,model.slices,train.steps\n"
                        "2,0.01,6,5,2,3\n3,0.01,6,5,2,3\n2,1e9,6,5,2,3\n")
        done = self.sweep("run", full, "--jobs", "2", "--ranks", "1", "--name", "t", "--mft", os.environ["MFT"])
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)  # one row diverged
        self.assertIn("row 2: exit 4", done.stdout)
        # The run's file says how it ended (/history.end), and why.
        self.assertRegex(done.stdout,
                         r"failed: runs/sweep-t-2\.h5: diverged at step 0 of 3: training step 1: .*not finite")
        self.assertIn("2 of 3 runs finished", done.stdout)
        with open(self.tmp / "runs" / "sweep-t.csv") as f:
            collected = list(csv.DictReader(f))
        # every run, each with its status; the table's keys as columns
        self.assertEqual([(r["file"], r["model.heads"], r["train.dtau"], r["steps"], r["status"]) for r in collected],
                         [("sweep-t-0.h5", "2", "0.01", "3", "complete"), ("sweep-t-2.h5", "2", "1e9", "0", "diverged"),
                          ("sweep-t-1.h5", "3", "0.01", "3", "complete")])
        # a diverged run's final values are no result: blank
        self.assertEqual([(r["R"], r["Q"]) for r in collected if r["status"] == "diverged"], [("", "")])
        self.assertTrue(all(r["R"] for r in collected if r["status"] == "complete"))
        self.assertTrue((self.tmp / "runs" / "sweep-t.png").stat().st_size > 0)
        finished = (self.tmp / "runs" / "sweep-t-0.h5").read_bytes()
        again = self.sweep("run", full, "--jobs", "2", "--ranks", "1", "--name", "t", "--mft", os.environ["MFT"])
        self.assertEqual(again.returncode, 1, again.stderr)
        self.assertEqual((self.tmp / "runs" / "sweep-t-0.h5").read_bytes(), finished,
                         "a rerun changed a finished run (it resumes)")

        # A task that never wrote its file, and a file that is no run.
        (self.tmp / "runs" / "junk.h5").write_text("not HDF5")
        done = self.sweep("collect", "--report-failed", "runs/sweep-t-0.h5", "runs/sweep-t-9.h5", "runs/junk.h5",
                          "--csv", "c.csv")
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("failed: runs/sweep-t-9.h5: no such file (the task ended before its first snapshot", done.stdout)
        self.assertIn("failed: runs/junk.h5: not an HDF5 file", done.stdout)
        self.assertIn("1 of 3 runs finished", done.stdout)
        with open(self.tmp / "c.csv") as f:
            self.assertEqual(sorted((r["file"], r["status"]) for r in csv.DictReader(f)),
                             [("junk.h5", "failed"), ("sweep-t-0.h5", "complete"), ("sweep-t-9.h5", "failed")])
        done = self.sweep("collect", "--report-failed", "runs/sweep-t-0.h5", "runs/sweep-t-1.h5")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

    def test_rerun_skips_finished_rows_and_continues_stopped_ones(self):
        """Re-running a sweep starts no mft for a finished row and continues a
        stopped one to the particles of an uninterrupted run, with auto
        scales in the table (the files record the resolved numbers)."""
        table = self.tmp / "table.csv"
        table.write_text("model.heads,init.sigma_qk,init.seed,data.sequences,data.tokens,model.slices,train.steps\n"
                         "2,auto,1,6,5,2,4\n3,auto,2,6,5,2,4\n")
        run = ["run", table, "--ranks", "1", "--name", "r", "--mft", os.environ["MFT"]]
        first = self.sweep(*run)
        self.assertEqual(first.returncode, 0, first.stdout + first.stderr)
        files = [self.tmp / "runs" / f"sweep-r-{i}.h5" for i in (0, 1)]
        straight = [f.read_bytes() for f in files]
        again = self.sweep(*run)
        self.assertEqual(again.returncode, 0, again.stdout + again.stderr)
        for i in (0, 1):
            self.assertIn(f"row {i}: finished already (runs/sweep-r-{i}.h5 is at step 4, its train.steps): not run",
                          again.stdout)
        self.assertNotIn("exit", again.stdout.replace("exit 0", ""))
        self.assertEqual([f.read_bytes() for f in files], straight, "a rerun changed a finished run")
        # Row 1 stopped at step 2 (as a stop signal leaves it): the rerun continues it alone.
        files[1].unlink()
        stopped = subprocess.run([os.environ["MFT"], "train", "--model.heads", "3", "--init.sigma_qk", "auto",
                                  "--init.seed", "2", "--data.sequences", "6", "--data.tokens", "5",
                                  "--model.slices", "2", "--train.steps", "2", "--output.file", str(files[1])],
                                 capture_output=True, text=True, cwd=self.tmp)
        self.assertEqual(stopped.returncode, 0, stopped.stderr)
        resumed = self.sweep(*run)
        self.assertEqual(resumed.returncode, 0, resumed.stdout + resumed.stderr)
        self.assertIn("row 0: finished already", resumed.stdout)
        self.assertIn("row 1: exit 0", resumed.stdout)
        import h5py
        import numpy as np
        with h5py.File(files[1], "r") as f, h5py.File(io.BytesIO(straight[1]), "r") as g:
            self.assertEqual(int(f["particles/step"][-1]), 4)
            for name in ("Q", "K", "V"):
                np.testing.assert_array_equal(f["particles/" + name][-1], g["particles/" + name][-1])

    def test_grid_with_base_and_seeds(self):
        """A grid over M, L and seeds with a base and options for every row:
        both reach every run; the collection carries the swept keys, the
        seed, the held-out risk and the status; the figure has a panel for
        M and for L, each point the mean over the seeds with its band."""
        (self.tmp / "run.ini").write_text(BASE)
        done = self.sweep("grid", "model.heads=2,3", "model.slices=1,2", "init.seed=1:2", "--base", "run.ini",
                          "-o", "g.csv")
        self.assertEqual(done.returncode, 0, done.stderr)
        done = self.sweep("run", "g.csv", "--jobs", "2", "--ranks", "1", "--name", "g", "--mft", os.environ["MFT"],
                          "--args", "--train.steps 2")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        import h5py
        for task in range(8):
            with h5py.File(self.tmp / "runs" / f"sweep-g-{task}.h5", "r") as f:
                cfg = {k: str(v.decode() if isinstance(v, bytes) else v) for k, v in f["config"].attrs.items()}
            self.assertEqual((cfg["data.sequences"], cfg["data.test_sequences"], cfg["train.steps"]), ("6", "3", "2"))
            self.assertEqual(cfg["model.heads"], ["2", "3"][task // 4])
            self.assertEqual(cfg["init.seed"], ["1", "2"][task % 2])
        with open(self.tmp / "runs" / "sweep-g.csv") as f:
            reader = csv.DictReader(f)
            self.assertEqual(reader.fieldnames, ["file", "status", "model.heads", "model.slices", "init.seed", "M",
                                                 "L", "steps", "tau", "R0", "R", "Q", "rate", "tau_eps", "test_risk",
                                                 "test_accuracy", "baseline", "test_ratio", "ntk_lambda_min",
                                                 "ntk_lambda_max", "euler_dtau_max"])
            rows = list(reader)
        self.assertEqual(len(rows), 8)
        self.assertTrue(all(r["status"] == "complete" and math.isfinite(float(r["test_risk"])) for r in rows), rows)
        self.assertEqual(sorted(r["init.seed"] for r in rows), ["1"] * 4 + ["2"] * 4)
        self.assertTrue((self.tmp / "runs" / "sweep-g.png").read_bytes().startswith(b"\x89PNG"))

        frame = sweep.collect([str(self.tmp / "runs" / f"sweep-g-{t}.h5") for t in range(8)],
                              table=str(self.tmp / "g.csv"))
        panels = sweep_plot.figure_data(frame)
        self.assertEqual(sorted((p["key"], p["measure"]) for p in panels),
                         [("model.heads", "R"), ("model.heads", "test_risk"), ("model.slices", "R"),
                          ("model.slices", "test_risk")])
        for p in panels:
            self.assertEqual(p["seeds"], ["init.seed"])
            self.assertEqual(len(p["curves"]), 2)  # one per value of the other key
            other = "model.slices" if p["key"] == "model.heads" else "model.heads"
            for curve in p["curves"]:
                self.assertTrue(curve["label"].startswith(f"{other} = "), curve["label"])
                self.assertEqual(curve["runs"], [2, 2])  # two seeds a point, one point a value
                self.assertEqual(len(set(curve["x"])), len(curve["x"]))
                for lo, mean, hi in zip(curve["low"], curve["mean"], curve["high"]):
                    self.assertLessEqual(lo, mean)
                    self.assertLessEqual(mean, hi)
                    self.assertLess(lo, hi)  # two seeds, two risks: a band


class Figure(unittest.TestCase):
    """The figure of synthetic runs: panels only for the keys that vary."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-figure-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def test_only_swept_keys(self):
        import h5py
        paths = []
        for i, (M, seed) in enumerate([(2, 1), (2, 2), (8, 1), (8, 2), (32, 1), (32, 2)]):
            path = str(self.tmp / f"r{i}.h5")
            write_run(path, M=M, L=4, seed=i)
            with h5py.File(path, "r+") as f:
                f["config"].attrs["init.seed"] = seed
            paths.append(path)
        frame = sweep.collect(paths)
        self.assertEqual(frame.attrs["swept"], ["model.heads"])  # L and the other keys do not vary
        self.assertEqual(list(frame["init.seed"]), ["1", "2"] * 3)
        panels = sweep.plot(frame, str(self.tmp / "f.png"))
        self.assertEqual([p["key"] for p in panels], ["model.heads"])  # no panel for L
        (curve,) = panels[0]["curves"]
        self.assertEqual(curve["x"], ["2", "8", "32"])  # one point a width, not one a run
        self.assertEqual(curve["label"], "")
        risks = {(M, s): float(r) for M, s, r in zip(frame["M"], frame["init.seed"], frame["R"])}
        for x, lo, mean, hi in zip(curve["x"], curve["low"], curve["mean"], curve["high"]):
            pair = [risks[(int(x), "1")], risks[(int(x), "2")]]
            self.assertEqual((lo, hi), (min(pair), max(pair)))
            self.assertAlmostEqual(mean, sum(pair) / 2)
        self.assertTrue((self.tmp / "f.png").read_bytes().startswith(b"\x89PNG"))


    def test_axes(self):
        """--x, --hue, --facet and --y choose what the figure draws; curves
        and facets come in numeric order (4 before 16), only seeds are
        averaged."""
        import h5py
        paths = []
        for i, (M, L, seed) in enumerate((M, L, s) for M in (16, 4, 8) for L in (16, 4) for s in (1, 2)):
            path = str(self.tmp / f"r{i}.h5")
            write_run(path, M=M, L=L, seed=i)
            with h5py.File(path, "r+") as f:
                f["config"].attrs["init.seed"] = seed
            paths.append(path)
        frame = sweep.collect(paths)
        panels = sweep.plot(frame, str(self.tmp / "default.png"))
        self.assertEqual([p["key"] for p in panels], ["model.heads", "model.slices"])
        self.assertEqual([c["label"] for c in panels[0]["curves"]], ["model.slices = 4", "model.slices = 16"])
        self.assertEqual(panels[0]["curves"][0]["x"], ["4", "8", "16"])
        self.assertEqual(panels[0]["curves"][0]["runs"], [2, 2, 2])  # the two seeds, nothing else
        panels = sweep.plot(frame, str(self.tmp / "hue.png"), x="model.heads", hue="model.slices")
        self.assertEqual([(p["key"], [c["label"] for c in p["curves"]]) for p in panels],
                         [("model.heads", ["model.slices = 4", "model.slices = 16"])])
        panels = sweep.plot(frame, str(self.tmp / "facet.png"), x="model.heads", facet="model.slices", y=["rate", "Q"])
        self.assertEqual([(p["measure"], p["facet"]) for p in panels],
                         [("rate", ("model.slices", "4")), ("rate", ("model.slices", "16")),
                          ("Q", ("model.slices", "4")), ("Q", ("model.slices", "16"))])
        for p in panels:
            (curve,) = p["curves"]
            self.assertEqual((curve["label"], curve["runs"]), ("", [2, 2, 2]))
            for x, mean in zip(curve["x"], curve["mean"]):
                rows = frame[(frame["M"] == int(x)) & (frame["L"] == int(p["facet"][1]))]
                self.assertAlmostEqual(mean, rows[p["measure"]].mean())
        self.assertTrue((self.tmp / "facet.png").read_bytes().startswith(b"\x89PNG"))
        for kwargs, words in (({"x": "model.d"}, "--x model.d: not a key"),
                              ({"x": "model.heads", "hue": "model.heads"}, "--hue model.heads: --x names it"),
                              ({"y": ["status"]}, "--y status: not a numeric column")):
            with self.assertRaises(ValueError) as caught:
                sweep.sweep_plot.check_axes(frame, **kwargs)
            self.assertIn(words, str(caught.exception))
        for words, said in ((["--rate-window", "1:0.5"], "error: --rate-window 1:0.5: not A:B with 0 <= A < B <= 1"),
                            (["--rate-window", "x"], "error: --rate-window x: not A:B"),
                            (["--eps", "0"], "error: --eps 0: not a positive risk")):
            done = command(self.tmp, "collect", *paths, *words)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
            self.assertIn(said, done.stderr)
        done = command(self.tmp, "collect", *paths, "--facet", "model.d")
        self.assertEqual((done.returncode, done.stderr.strip()),
                         (1, "error: --facet model.d: not a key of these runs (they have model.heads, model.slices, "
                             "init.seed)"))


class Submit(unittest.TestCase):
    """submit_sweep.sh with a stand-in sbatch and mft: the base and the
    options for every row reach every task (through the copy of the table
    the tasks read), a row mft refuses stops the submission, and the site's
    options reach every job, the collect job with the placement options
    given for the array."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-submit-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        (self.tmp / "bin").mkdir()
        sbatch = self.tmp / "bin" / "sbatch"
        sbatch.write_text('#!/usr/bin/env bash\nprintf "%s|" "$@" >>"$SBATCH_LOG"\necho >>"$SBATCH_LOG"\necho 41\n')
        sbatch.chmod(0o755)
        stand_in_mft(self.tmp / "build")
        (self.tmp / "run.ini").write_text(BASE)
        (self.tmp / "site.options").write_text("# the site\n#SBATCH --account=site1\n--comment=mft sweep\n"
                                               "--qos=low\n")
        self.env = dict(os.environ, PATH=f"{self.tmp / 'bin'}:{os.environ.get('PATH', '')}",
                        SBATCH_LOG=str(self.tmp / "sbatch.log"), MFT_BUILD=str(self.tmp / "build"),
                        MFT_SLURM_OPTIONS=str(self.tmp / "site.options"), SBATCH_QOS="high",
                        MFT_SWEEP_ARGS="--train.dtau 0.5")

    def submit(self, *args):
        return subprocess.run(["bash", str(SCRIPTS / "slurm" / "submit_sweep.sh"), *map(str, args)], env=self.env,
                              cwd=self.tmp, capture_output=True, text=True, timeout=120)

    def test_dry_run(self):
        (self.tmp / "t.csv").write_text("model.heads,init.seed\n2,1\n,2\n")
        done = self.submit("t.csv", "--base", "run.ini", "--dry-run", "-A", "proj", "--time=01:00:00")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertFalse((self.tmp / "sbatch.log").exists(), "sbatch ran in a dry run")
        self.assertFalse((self.tmp / "runs").exists(), "a dry run wrote runs/")
        lines = done.stdout.splitlines()
        self.assertEqual(lines[:4], ["row 0 (line 2): model.heads = 2, init.seed = 1",
                                     "row 1 (line 3): model.heads = default, init.seed = 2",
                                     "every row: --config run.ini --train.dtau 0.5", "rows: 2"])
        slurm = SCRIPTS / "slurm"
        self.assertEqual(lines[-2], f"array job:   sbatch --account=site1 --comment=mft\\ sweep --parsable "
                                    f"--array=0-1 -A proj --time=01:00:00 {slurm}/sweep.sbatch "
                                    "runs/sweep-table-XXXXXX.csv")
        self.assertEqual(lines[-1], f"collect job: sbatch --account=site1 --comment=mft\\ sweep --parsable -A proj "
                                    f"--dependency=afterany:ARRAYJOB {slurm}/collect.sbatch ARRAYJOB 2 "
                                    "runs/sweep-table-XXXXXX.csv")
        # the dry run checks as much as a submission does
        (self.tmp / "bad.csv").write_text("model.heads\nx\n")
        done = self.submit("bad.csv", "--dry-run")
        self.assertEqual(done.returncode, 2)
        self.assertIn("model.heads = x", done.stderr)

    def test_submit(self):
        (self.tmp / "t.csv").write_text("model.heads,init.seed\n2,1\n4,2\n")
        done = self.submit("t.csv", "--base", "run.ini", "-A", "proj", "-n", "4", "--time=01:00:00",
                           "--args", "--train.steps 50", "--partition=short", "--mail-user", "a@b")
        self.assertEqual(done.returncode, 0, done.stderr)
        array, collect = [line.split("|")[:-1] for line in (self.tmp / "sbatch.log").read_text().splitlines()]
        copy = array[-1]
        self.assertRegex(copy, r"/runs/sweep-table-\w+\.csv$")
        self.assertIn(f"the tasks read runs/{Path(copy).name}", done.stdout)
        # the site's options first (--qos left to SBATCH_QOS), then the array's own
        self.assertEqual(array[:3], ["--account=site1", "--comment=mft sweep", "--parsable"])
        self.assertEqual(array[3:-2], ["--array=0-1", "-A", "proj", "-n", "4", "--time=01:00:00", "--partition=short",
                                       "--mail-user", "a@b"])
        # the collect job: the site's options and the placement options given for the array
        self.assertEqual(collect[:-4], ["--account=site1", "--comment=mft sweep", "--parsable", "-A", "proj",
                                        "--partition=short", "--mail-user", "a@b", "--dependency=afterany:41"])
        self.assertEqual(collect[-3:], ["41", "2", copy])
        # every row checked by mft's dry run with the base and the shared options
        calls = (self.tmp / "build" / "apps" / "dry-runs.log").read_text().splitlines()
        self.assertEqual(len(calls), 2)
        for call in calls:
            self.assertIn("--config run.ini", call)
            self.assertIn("--train.steps 50 --train.dtau 0.5", call)
        # each task: its row with the base and the shared options (sweep.sbatch with a stand-in run-mft.sh)
        root = self.tmp / "root"
        (root / "scripts" / "slurm").mkdir(parents=True)
        (root / "scripts" / "mft").symlink_to(SCRIPTS / "mft")
        (root / "scripts" / "env.sh").symlink_to(SCRIPTS / "env.sh")
        (root / "CMakeLists.txt").write_text("")
        stub = root / "scripts" / "slurm" / "run-mft.sh"
        stub.write_text('#!/usr/bin/env bash\necho "$*"\n')
        stub.chmod(0o755)
        (self.tmp / "t.csv").write_text("model.heads,init.seed\n8,8\n")  # the tasks read the copy
        for task, (heads, seed) in enumerate([("2", "1"), ("4", "2")]):
            env = dict(os.environ, MFT_ROOT=str(root), SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_JOB_ID="41")
            env.pop("PYTHONPATH", None)
            ran = subprocess.run(["bash", str(SCRIPTS / "slurm" / "sweep.sbatch"), copy], env=env, cwd=self.tmp,
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(ran.returncode, 0, ran.stderr)
            self.assertEqual(ran.stdout.splitlines()[-1],
                             f"runs/sweep-41-{task}.h5 --config {self.tmp / 'run.ini'} --model.heads {heads} "
                             f"--init.seed {seed} --train.steps 50 --train.dtau 0.5")

    def test_refused_before_submission(self):
        (self.tmp / "bad.csv").write_text("model.heads\n2\nx\n")
        done = self.submit("bad.csv", "-A", "proj")
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stderr.splitlines(),
                         ["error: bad.csv: row 1 (line 3): mft: error: model.heads = x: not an integer"])
        self.assertFalse((self.tmp / "sbatch.log").exists(), "submitted")
        self.assertFalse((self.tmp / "runs").exists() and any((self.tmp / "runs").iterdir()))
        (self.tmp / "good.csv").write_text("model.heads\n2\n")
        for args, word in ((["good.csv", "stray"], "'stray' is not an sbatch option"),
                           (["good.csv", "--time"], "needs a value")):
            done = self.submit(*args)
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertIn(word, done.stderr)
        (self.tmp / "site.options").write_text("account=x\n")
        done = self.submit("good.csv")
        self.assertEqual(done.returncode, 2)
        self.assertIn("site.options, line 1", done.stderr)
        self.assertFalse((self.tmp / "sbatch.log").exists(), "submitted")

#!/usr/bin/env python3
"""The mft Python package (scripts/mft) on synthetic mft/1 run files written
here with h5py: the labelled particles and the history table against the raw
datasets, the sweep-table reader (module and command line, and the Slurm
scripts that call it), and scripts/collect_sweep.py; with them the tests of
damaged run files and hostile sweep tables (damaged_inputs.py), of the
token geometry along depth (token_geometry.py), of the readers of /forward
and /ntk (forward_ntk.py), of many runs at once (many_runs.py) and of the
reference's tables, its particle species and the species of a file
(reference_entries.py).

  python3 tests/python/test_package.py [-v]
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixtures import ENV, PYTHON, ROOT, SCRIPTS, stand_in_mft, write_run  # noqa: E402
import mft  # noqa: E402
from mft import io as mft_io  # noqa: E402
from mft import sweep  # noqa: E402
# Damaged run files and hostile sweep tables, run with these tests.
from damaged_inputs import DamagedRun, HostileSweepTable  # noqa: E402, F401
# Hostile run files (links, text, kinds of file) and sweep arguments.
from hostile_inputs import HostileRunFile, HostileSweepArguments, ToolBoundary, ToolOutputs  # noqa: E402, F401
# mft.io in a notebook.
from notebook import Notebook  # noqa: E402, F401
# Sweeps run here and collected with their failures.
from sweeps import Check, Figure, Grid, LocalCommand, LocalSweep, Python, Submit  # noqa: E402, F401
# The token geometry along depth (mft.tokens).
from token_geometry import TokenGeometry, TokenViews  # noqa: E402, F401
# The readers of /forward and /ntk.
from forward_ntk import ForwardAndNtkFiles, OutputsOnWrittenFiles  # noqa: E402, F401
# Many runs as one Dataset, their labels, compare_runs' exact zero.
from many_runs import FourRuns, RunsOnWrittenFiles  # noqa: E402, F401
# The reference's tables bound to the configuration; species from the file.
from reference_entries import ReferenceEntries, ReferenceSpecies, SpeciesFromAttributes  # noqa: E402, F401


class Package(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-package-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def test_lazy_imports(self):
        code = ("import sys; import mft, mft.sweep; assert 'h5py' not in sys.modules; import mft.io; "
                "assert 'xarray' not in sys.modules and 'pandas' not in sys.modules, 'eager import'; "
                "assert mft.open_run is mft.io.open_run and mft.Run is mft.io.Run; "
                "assert mft.open_runs is mft.io.open_runs; print('ok')")
        done = subprocess.run([PYTHON, "-c", code], env=ENV, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(sorted(mft.__all__), ["FORMAT", "Run", "RunFileError", "open_run", "open_runs"])
        # A module as an attribute of the package alone (help(mft.io.Run) after `import mft`).
        code = "import mft; assert mft.io.Run.__doc__ and mft.sweep.collect; print('ok')"
        done = subprocess.run([PYTHON, "-c", code], env=ENV, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)

    def test_modules_listed(self):
        """mft.MODULES names every module of the package, and no other."""
        files = sorted(p.stem for p in (SCRIPTS / "mft").glob("*.py") if p.stem != "__init__")
        self.assertEqual(sorted(mft.MODULES), files)

    def test_sweep_imports_one_way(self):
        """The sweep modules import downwards only: each one's imports of the
        others (at the top or inside a function) form no cycle, sweep_table
        imports none of them and nothing imports the command module."""
        import ast
        family = {p.stem: p for p in (SCRIPTS / "mft").glob("sweep*.py")}
        imports = {}
        for name, path in family.items():
            found = set()
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    found |= {node.module} if node.module else {a.name for a in node.names}
            imports[name] = found & set(family)
        self.assertEqual(imports["sweep_table"], set())
        self.assertEqual([n for n, i in imports.items() if "sweep" in i], [])
        done, left = [], dict(imports)
        while left:  # peel off the modules whose imports are all placed: a cycle leaves some behind
            ready = sorted(n for n, i in left.items() if i <= set(done))
            self.assertTrue(ready, f"an import cycle among {sorted(left)}: {left}")
            done += ready
            for n in ready:
                del left[n]
        self.assertEqual(done[0], "sweep_table")
        self.assertEqual(done[-1], "sweep")

    def test_particles_xarray(self):
        path = str(self.tmp / "run.h5")
        arrays, _ = write_run(path, M=3, L=2, d=4, d_h=2, S=3)
        run = mft_io.open_run(path)
        self.addCleanup(run.close)
        self.assertEqual(list(run.species), ["Q", "K", "V", "W1", "W2"])
        for name in ("Q", "K", "V"):
            da = run.particles_xarray(name)
            self.assertEqual(da.dims, ("snapshot", "slice", "head", "row", "col"))
            self.assertEqual(da.shape, arrays[name].shape)
            self.assertEqual(da.name, name)
            np.testing.assert_array_equal(da.values, arrays[name])
            # step and tau: coordinates along snapshot, not dimensions
            self.assertEqual(da.coords["step"].dims, ("snapshot",))
            self.assertEqual(da.coords["tau"].dims, ("snapshot",))
            self.assertNotIn("step", da.dims)
            np.testing.assert_array_equal(da.coords["step"].values, arrays["step"])
            np.testing.assert_array_equal(da.coords["tau"].values, arrays["tau"])
            np.testing.assert_array_equal(da.coords["slice"].values, np.arange(2))
            np.testing.assert_array_equal(da.coords["head"].values, np.arange(3))
            # one entry by label against the raw array
            self.assertEqual(float(da.isel(snapshot=-1).sel(slice=1, head=2)[0, 1]), arrays[name][-1, 1, 2, 0, 1])
            by_step = da.sel(step=10)
            np.testing.assert_array_equal(by_step.values, arrays[name][1])
        with h5py.File(path, "r") as f:
            np.testing.assert_array_equal(run.particles_xarray("K").values, f["particles/K"][...])
        w1 = run.particles_xarray("W1")
        self.assertEqual(w1.dims, ("snapshot", "slice", "neuron", "row", "col"))
        np.testing.assert_array_equal(w1.coords["neuron"].values, np.arange(5))
        np.testing.assert_array_equal(w1.values, arrays["W1"])
        with self.assertRaises(mft_io.RunFileError) as caught:
            run.particles_xarray("X")
        self.assertIn(path, str(caught.exception))

    def test_particles_xarray_species_attribute(self):
        path = str(self.tmp / "tagged.h5")
        arrays, _ = write_run(path, mlp=False)
        with h5py.File(path, "r+") as f:
            for name in ("Q", "K", "V"):
                f["particles/" + name].attrs["species"] = "heads"
        run = mft_io.open_run(path)
        self.addCleanup(run.close)
        self.assertEqual(list(run.species), ["Q", "K", "V"])
        self.assertEqual(run.particles_xarray("V").dims[2], "head")
        with self.assertRaises(mft_io.RunFileError):
            run.particles_xarray("W1")

    def test_history_frame(self):
        path = str(self.tmp / "run.h5")
        _, hist = write_run(path, T=7)
        run = mft_io.open_run(path)
        self.addCleanup(run.close)
        frame = run.history_frame()
        self.assertEqual(list(frame.columns),
                         ["step", "tau", "risk", "objective", "grad_norm", "wall_time", "accuracy"])
        self.assertEqual(len(frame), 7)
        for name, values in hist.items():
            np.testing.assert_array_equal(frame[name].to_numpy(), values)
        self.assertEqual(frame["step"].dtype, np.int64)
        # A file that records its columns' order is read in that order.
        run.close()
        with h5py.File(path, "a") as f:
            f["history"].attrs["columns"] = "step,tau,accuracy,risk,objective,grad_norm,wall_time"
        run3 = mft_io.open_run(path)
        self.addCleanup(run3.close)
        self.assertEqual(list(run3.history_frame().columns),
                         ["step", "tau", "accuracy", "risk", "objective", "grad_norm", "wall_time"])
        path2 = str(self.tmp / "nohistory.h5")
        write_run(path2, history=False)
        run2 = mft_io.open_run(path2)
        self.addCleanup(run2.close)
        self.assertIsNone(run2.history_frame())


TABLE = """# widths and a readout with two weights
model.heads , readout.weights,model.slices, train.dtau

4,"0.5,0.25",2,0.1
  # an indented comment
16, "1, 2" ,8,
"""


class SweepTable(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-sweep-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def table(self, text, name="t.csv"):
        path = self.tmp / name
        path.write_text(text)
        return str(path)

    def test_rows_and_args(self):
        t = self.table(TABLE)
        rows = sweep.sweep_rows(t)
        self.assertEqual(rows, [
            {"model.heads": "4", "readout.weights": "0.5,0.25", "model.slices": "2", "train.dtau": "0.1"},
            {"model.heads": "16", "readout.weights": "1, 2", "model.slices": "8", "train.dtau": ""},
        ])
        self.assertEqual(list(rows[0]), ["model.heads", "readout.weights", "model.slices", "train.dtau"])
        self.assertEqual(sweep.sweep_args(t, 0), ["--model.heads", "4", "--readout.weights", "0.5,0.25",
                                                  "--model.slices", "2", "--train.dtau", "0.1"])
        # an empty value leaves its key out
        self.assertEqual(sweep.sweep_args(t, 1), ["--model.heads", "16", "--readout.weights", "1, 2",
                                                  "--model.slices", "8"])
        # carriage returns and a doubled quote
        t2 = self.table('a,b\r\n1,"x""y"\r\n', "crlf.csv")
        self.assertEqual(sweep.sweep_rows(t2), [{"a": "1", "b": 'x"y'}])
        self.assertEqual(sweep.sweep_rows(self.table("# only a header\na,b\n", "empty.csv")), [])
        self.assertEqual(sweep.sweep_rows(str(ROOT / "examples" / "sweep-heads-slices.csv"))[3],
                         {"model.heads": "16", "model.slices": "8", "train.dtau": "0.1", "train.steps": "60"})

    def assert_error(self, text, task, *words):
        t = self.table(text, "bad.csv")
        with self.assertRaises(sweep.SweepTableError) as caught:
            sweep.sweep_args(t, task)
        message = str(caught.exception)
        self.assertIn(t, message)
        self.assertNotIn("\n", message)
        for w in words:
            self.assertIn(w, message)
        return message

    def test_errors(self):
        self.assert_error("a,b\n1,2\n3\n", 0, "row 1", "line 3", "1 fields", "header 2")
        self.assert_error("a,b\n1,2,3\n", 0, "row 0", "3 fields")
        self.assert_error("a,,b\n1,2,3\n", 0, "empty key", "column 2")
        self.assert_error("a, \nx,y\n", 0, "empty key")
        self.assert_error("a,a\n1,2\n", 0, "a twice")
        self.assert_error("a,b\n1,2\n", 1, "no row 1")
        self.assert_error("a,b\n1,2\n", -1, "no row -1")
        self.assert_error('a,b\n1,"2\n', 0, "row 0", "quote")
        self.assert_error("# nothing\n\n", 0, "no header")
        with self.assertRaises(sweep.SweepTableError):
            sweep.sweep_rows(str(self.tmp / "missing.csv"))

    def cli(self, *args):
        return subprocess.run([PYTHON, "-m", "mft.sweep", *args], env=ENV, capture_output=True, cwd=self.tmp)

    def test_command_line(self):
        t = self.table(TABLE)
        done = self.cli("count", t)
        self.assertEqual((done.returncode, done.stdout, done.stderr), (0, b"2\n", b""))
        done = self.cli("args", t, "1")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.split(b"\0"),
                         [b"--model.heads", b"16", b"--readout.weights", b"1, 2", b"--model.slices", b"8", b""])
        bad = self.table("a,b\n1,2\n3,4,5\n", "bad.csv")
        for args in (("args", bad, "0"), ("count", bad), ("args", t, "2"), ("args", t, "x")):
            done = self.cli(*args)
            self.assertEqual(done.returncode, 2, args)
            self.assertEqual(done.stdout, b"", args)
            lines = done.stderr.decode().splitlines()
            self.assertEqual(len(lines), 1, (args, lines))
            self.assertTrue(lines[0].startswith("error: ") and args[1] in lines[0], lines)
            self.assertIn("row", lines[0])
        self.assertEqual(self.cli().returncode, 2)
        self.assertEqual(self.cli("args", t).returncode, 2)

    def test_slurm_scripts(self):
        """sweep.sbatch and submit_sweep.sh read the table through mft.sweep:
        run with a stand-in run-mft.sh and sbatch that print what they get."""
        if shutil.which("bash") is None:
            self.skipTest("no bash")
        root = self.tmp / "root"
        (root / "scripts" / "slurm").mkdir(parents=True)
        (root / "scripts" / "mft").symlink_to(SCRIPTS / "mft")
        (root / "scripts" / "env.sh").symlink_to(SCRIPTS / "env.sh")
        (root / "CMakeLists.txt").write_text("")  # a checkout: env.sh finds the package in scripts/
        stub = root / "scripts" / "slurm" / "run-mft.sh"
        stub.write_text('#!/usr/bin/env bash\nfor a in "$@"; do echo "[$a]"; done\n')
        stub.chmod(0o755)
        t = self.table(TABLE)
        env = dict(os.environ, MFT_ROOT=str(root), SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_JOB_ID="7",
                   MFT_SWEEP_ARGS="--train.steps 3")
        env.pop("PYTHONPATH", None)
        done = subprocess.run(["bash", str(SCRIPTS / "slurm" / "sweep.sbatch"), t], env=env, cwd=self.tmp,
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.splitlines()[1:], [
            "[runs/sweep-7-0.h5]", "[--model.heads]", "[4]", "[--readout.weights]", "[0.5,0.25]",
            "[--model.slices]", "[2]", "[--train.dtau]", "[0.1]", "[--train.steps]", "[3]"])
        self.assertTrue(done.stdout.startswith("mft-sweep: task 0: --model.heads 4"), done.stdout)
        env["SLURM_ARRAY_TASK_ID"] = "2"
        done = subprocess.run(["bash", str(SCRIPTS / "slurm" / "sweep.sbatch"), t], env=env, cwd=self.tmp,
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertNotIn("[runs/", done.stdout)
        self.assertIn("no row 2", done.stderr)

        # submit_sweep.sh: the row count into --array, with a stand-in sbatch
        bin_dir = self.tmp / "bin"
        bin_dir.mkdir()
        sbatch = bin_dir / "sbatch"
        sbatch.write_text('#!/usr/bin/env bash\necho "$*" >>"$SBATCH_LOG"\necho 41\n')
        sbatch.chmod(0o755)
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}", SBATCH_LOG=str(self.tmp / "sbatch.log"),
                   MFT_BUILD=str(self.tmp / "build"), MFT_SLURM_OPTIONS="")
        stand_in_mft(self.tmp / "build")  # its --keys lists the table's keys
        done = subprocess.run(["bash", str(SCRIPTS / "slurm" / "submit_sweep.sh"), t], env=env, cwd=self.tmp,
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("(2 runs)", done.stdout)
        submitted = (self.tmp / "sbatch.log").read_text()
        self.assertIn("--array=0-1", submitted)
        # the collect job runs however the tasks end, and knows how many there were and their table
        self.assertRegex(submitted, r"--dependency=afterany:41 \S*collect.sbatch 41 2 \S*/runs/sweep-table-\w+\.csv")
        bad = self.table("a,b\n1,2\n3,4,5\n", "bad.csv")
        done = subprocess.run(["bash", str(SCRIPTS / "slurm" / "submit_sweep.sh"), bad], env=env, cwd=self.tmp,
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn("row 1", done.stderr)


class CollectSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-collect-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def test_collect(self):
        a, b = self.tmp / "wide.h5", self.tmp / "deep.h5"
        _, ha = write_run(str(a), M=8, L=2, T=6, seed=1)
        _, hb = write_run(str(b), M=2, L=4, T=4, seed=2)
        out = self.tmp / "sweep.csv"
        done = subprocess.run([PYTHON, str(SCRIPTS / "collect_sweep.py"), str(b), str(a), "--csv", str(out),
                               "--plot", str(self.tmp / "sweep.png")], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        # the swept keys: those whose values differ between the runs' /config
        self.assertEqual(lines[0].split(), ["file", "status", "model.heads", "model.slices", "train.steps",
                                            "init.seed", "steps", "tau", "R", "initial", "R", "final",
                                            "Q", "final", "rate", "test", "R", "test/base"])
        self.assertEqual([line.split()[:2] for line in lines[1:3]], [["wide.h5", "complete"],
                                                                     ["deep.h5", "complete"]])  # sorted by L, M
        self.assertEqual(lines[3:], [f"wrote {out}", f"wrote {self.tmp / 'sweep.png'}"])
        raw = out.read_bytes()
        self.assertNotIn(b"\r", raw)
        self.assertTrue(raw.startswith(b"file,status,model.heads,model.slices,train.steps,init.seed,M,L,steps,tau,"
                                       b"R0,R,Q,rate,tau_eps,test_risk,test_accuracy,baseline,test_ratio,"
                                       b"ntk_lambda_min,ntk_lambda_max,euler_dtau_max\n"), raw)
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual([(r["file"], int(r["M"]), int(r["L"])) for r in rows], [("wide.h5", 8, 2), ("deep.h5", 2, 4)])
        for r, h in zip(rows, (ha, hb)):
            self.assertEqual(int(r["steps"]), h["step"][-1])
            self.assertEqual(float(r["tau"]), h["tau"][-1])
            self.assertEqual(float(r["R0"]), h["risk"][0])
            self.assertEqual(float(r["R"]), h["risk"][-1])
            self.assertEqual(float(r["Q"]), h["objective"][-1])
        self.assertTrue((self.tmp / "sweep.png").read_bytes().startswith(b"\x89PNG"))

        # the module gives the same table
        frame = sweep.collect([str(a), str(b)])
        self.assertEqual(list(frame.columns), sweep.COLUMNS[:2] + ["model.heads", "model.slices", "train.steps"]
                         + sweep.COLUMNS[2:])
        self.assertEqual(list(frame["file"]), ["wide.h5", "deep.h5"])
        # R = c exp(-0.3 step) at tau = 0.1 step: rate 3 over any window; R reaches
        # c exp(-0.45) at tau 0.15 exactly (log-linear between the rows of steps 1 and 2)
        eps = float(ha["risk"][0]) * np.exp(-0.45)
        frame = sweep.collect([str(a)], window=(0.0, 0.5), eps=eps)
        self.assertAlmostEqual(frame["rate"][0], 3.0, delta=1e-12)
        self.assertAlmostEqual(frame["tau_eps"][0], 0.15, delta=1e-12)
        self.assertTrue(np.isnan(sweep.collect([str(a)], eps=1e-9)["tau_eps"][0]))  # never reached
        # the held-out baseline: /baselines' reference, or for an earlier file
        # under the squared loss the zero predictor's |y|^2 / 2 from its data
        held = self.tmp / "held.h5"
        _, hh = write_run(str(held), M=2, L=2, T=4, seed=3)
        y = np.array([[1.0], [2.0], [-3.0]])
        with h5py.File(held, "r+") as f:
            f["config"].attrs["loss.kind"] = "squared"
            f["data/test_targets"] = y
            f["history/test_risk"] = np.linspace(2.0, 1.0, 4)
        row = sweep.collect([str(held)]).iloc[0]
        self.assertEqual((row["baseline"], row["test_ratio"]), (14 / 6, 1.0 / (14 / 6)))
        with h5py.File(held, "r+") as f:
            f["baselines/zero"] = [4.0]
            f["baselines"].attrs["reference"] = "zero"
        row = sweep.collect([str(held)]).iloc[0]
        self.assertEqual((row["baseline"], row["test_ratio"]), (4.0, 0.25))

        # refusals: one line naming the file
        (self.tmp / "text.h5").write_text("plain text")
        nohist = self.tmp / "nohist.h5"
        write_run(str(nohist), history=False)
        for bad in ("text.h5", "nohist.h5", "missing.h5"):
            done = subprocess.run([PYTHON, str(SCRIPTS / "collect_sweep.py"), str(a), str(self.tmp / bad)],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 1, bad)
            self.assertEqual(done.stdout, "")
            self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
            self.assertIn(bad, done.stderr)
            self.assertTrue(done.stderr.startswith("error: "), done.stderr)


if __name__ == "__main__":
    unittest.main()

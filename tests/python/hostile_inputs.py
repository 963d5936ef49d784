"""Hostile run files and arguments (run by test_package.py): text that is not
UTF-8 in attributes, links that do not resolve or loop, a group that is a
dataset, paths that are folders, FIFOs or devices; the reader refuses each
with a RunFileError of one line naming the object, and the tools (a plot
script, python3 -m mft.sweep collect and run) with one stderr line and no
traceback, never blocking on a FIFO.
"""
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import h5py
import numpy as np

from fixtures import ENV, PYTHON, SCRIPTS, changed_copy, script, write_run
from mft import io as mft_io


class HostileRunFile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="mft-hostile-run-"))
        cls.path = str(cls.tmp / "run.h5")
        write_run(cls.path)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def variant(self, name, change):
        return changed_copy(self.path, self.tmp, name, change)

    def refused(self, path, *words, read=None):
        """RunFileError of one line naming `path` and `words`, from
        open_run (read None) or from read(run)."""
        with self.assertRaises(mft_io.RunFileError) as caught:
            run = mft_io.open_run(path)
            self.addCleanup(run.close)
            if read is not None:
                read(run)
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        for w in (path,) + words:
            self.assertIn(w, message)
        return message

    def test_text_that_is_not_utf8(self):
        def fixed(f):
            f.attrs["format"] = np.bytes_(b"mft\xff/1")
        self.refused(self.variant("format.h5", fixed), "the root attribute format", "not UTF-8", "byte 3")

        def variable(f):  # variable-length UTF-8 text: h5py hands the bad bytes back as surrogates
            f.attrs.create("format", b"mft/\xfe", dtype=h5py.string_dtype("utf-8"))
        self.refused(self.variant("format-vlen.h5", variable), "the root attribute format", "not UTF-8")

        def config(f):
            f["config"].attrs["data.task"] = np.bytes_(b"icl\xfe")
        path = self.variant("config.h5", config)
        self.refused(path, "/config.data.task", "not UTF-8", read=lambda run: run.config)
        with mft_io.open_run(path) as run:
            self.assertIn("configuration damaged", repr(run))  # repr itself never raises

        def species(f):
            f["particles/Q"].attrs["species"] = np.bytes_(b"he\xffads")
        self.refused(self.variant("species.h5", species), "/particles/Q.species", read=lambda run: run.particles(0))

    def test_links(self):
        def external(name):
            def change(f):
                del f[name]
                f[name] = h5py.ExternalLink(str(self.tmp / "missing.h5"), "/Q")
            return change

        def dangling(name):
            def change(f):
                del f[name]
                f[name] = h5py.SoftLink("/nowhere")
            return change

        def loop(name):
            def change(f):
                del f[name]
                f["a"], f["b"] = h5py.SoftLink("/b"), h5py.SoftLink("/a")
                f[name] = h5py.SoftLink("/a")
            return change

        for i, (make, word) in enumerate(((external, "an external link to"), (dangling, "a soft link to /nowhere"),
                                          (loop, "a soft link to /a"))):
            # at open: a required object
            for name in ("config", "data/tokens", "particles/step"):
                self.refused(self.variant(f"open{i}-{name.replace('/', '-')}.h5", make(name)), f"/{name} ", word)
            # later: a particle dataset, a history column
            path = self.variant(f"q{i}.h5", make("particles/Q"))
            for read in (lambda run: run.species, lambda run: run.particles(0), lambda run: run.snapshot_count,
                         lambda run: run.particles_xarray("K")):
                self.refused(path, "/particles/Q ", word, read=read)
            self.refused(self.variant(f"h{i}.h5", make("history/risk")), "/history/risk ", word,
                         read=lambda run: run.history)
        self.refused(self.variant("loop-particles.h5", loop("particles")), "/particles/step", "looked up")

    def test_wrong_kinds(self):
        def history(f):
            del f["history"]
            f["history"] = np.zeros(3)
        self.refused(self.variant("history.h5", history), "/history is a dataset, not a group",
                     read=lambda run: run.history)

        def config(f):
            del f["config"]
            f["config"] = np.zeros(3)
        self.refused(self.variant("config-dataset.h5", config), "/config is a dataset, not a group")

        def tokens(f):
            del f["data/tokens"]
            f.create_group("data/tokens")
        self.refused(self.variant("tokens-group.h5", tokens), "/data/tokens is a group, not a dataset")

    def test_many_runs_and_the_history_table(self):
        """open_runs and history_frame on values of the wrong kind: one
        RunFileError line naming the file or key."""
        from mft import runs

        def text_columns(f):
            f["history"].attrs["columns"] = 3.0
        self.refused(self.variant("columns.h5", text_columns), "/history.columns", "not the",
                     read=lambda run: run.history_frame())

        def nan_step(f):
            step = f["history/step"][...].astype(float)
            step[1] = np.nan
            del f["history/step"]
            f["history/step"] = step
        path = self.variant("nan-step.h5", nan_step)
        with self.assertRaises(mft_io.RunFileError) as caught:
            runs.open_runs([path])
        self.assertIn("not whole numbers", str(caught.exception))

        def text_heads(f):
            f["config"].attrs["model.heads"] = "three"
        mixed = self.variant("text-heads.h5", text_heads)
        with self.assertRaises(mft_io.RunFileError) as caught:
            runs.open_runs([self.path, mixed], dims=["model.heads"])
        message = str(caught.exception)
        self.assertNotIn("\n", message)
        for w in ("model.heads", "text in", mixed, "a number in", self.path):
            self.assertIn(w, message)

    def test_not_regular_files(self):
        fifo = self.tmp / "fifo.h5"
        os.mkfifo(fifo)
        folder = self.tmp / "folder.h5"
        folder.mkdir()
        for path, word in ((str(folder), "a folder, not a regular file"), (str(fifo), "a FIFO, not a regular file"),
                           ("/dev/zero", "a device, not a regular file"), (str(self.tmp / "none.h5"), "no such file")):
            self.refused(path, word)
            # the scripts: one line, no traceback, no wait for a writer (script() times out at 60 s)
            status, out, err = script("plot_history", path, "-o", self.tmp / "h.png")
            self.assertEqual(status, 1, (path, err))
            self.assertEqual(err.splitlines(), [f"error: {path}: {word}"])
        def loop(f):
            del f["history/risk"]
            f["history/risk"], f["history/risk2"] = h5py.SoftLink("/history/risk2"), h5py.SoftLink("/history/risk")
        loop = self.variant("loop.h5", loop)
        status, out, err = script("plot_history", loop, "-o", self.tmp / "h.png")
        self.assertEqual((status, len(err.splitlines())), (1, 1), err)
        self.assertIn("/history/risk", err)


class ToolOutputs(unittest.TestCase):
    """No tool writes over what it reads: an output that is an input (by
    name, through a symbolic or a hard link, as the default name beside a
    run), a symbolic link to nothing or a figure format matplotlib does not
    write is refused in one line before any work, every input byte-identical
    and no file created."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-tool-outputs-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.run_file = self.tmp / "run.h5"
        write_run(str(self.run_file))
        self.other = self.tmp / "other.h5"
        write_run(str(self.other), seed=1)
        self.ini = self.tmp / "a.ini"
        self.ini.write_text("[model]\nheads = 2\n")
        (self.tmp / "via-link.png").symlink_to(self.run_file)
        os.link(self.run_file, self.tmp / "hard.png")
        (self.tmp / "nowhere.png").symlink_to(self.tmp / "missing" / "x.png")

    def state(self):
        return {p.name: (p.is_symlink(), p.read_bytes() if p.is_file() else None) for p in self.tmp.iterdir()}

    def refused(self, command, *words):
        before = self.state()
        done = subprocess.run([PYTHON, *map(str, command)], env=ENV, capture_output=True, text=True, timeout=60,
                              cwd=self.tmp)
        self.assertNotEqual(done.returncode, 0, (command, done.stdout, done.stderr))
        self.assertNotIn("Traceback", done.stderr)
        self.assertEqual(len(done.stderr.splitlines()), 1, (command, done.stderr))
        self.assertTrue(done.stderr.startswith("error: "), done.stderr)
        for w in words:
            self.assertIn(w, done.stderr, command)
        self.assertEqual(self.state(), before, f"{command}: an input changed or a file was made")

    def test_figures(self):
        run, other = self.run_file, self.other
        tools = (["plot_history.py", run], ["plot_history.py", run, other], ["plot_particles.py", run],
                 ["compare_runs.py", run, other], ["plot_tokens.py", run], ["plot_attention.py", run])
        for tool in tools:
            command = [SCRIPTS / tool[0], *tool[1:]]
            self.refused(command + ["-o", run], "-o", "that is the input")
            self.refused(command + ["-o", self.tmp / "via-link.png"], "through a symbolic link")
            self.refused(command + ["-o", self.tmp / "hard.png"], "that is the input")
            self.refused(command + ["-o", self.tmp / "nowhere.png"], "which does not exist")
            self.refused(command + ["-o", self.tmp / "figure.h5"], "not a figure format matplotlib writes")
            self.refused(command + ["-o", self.tmp / "no" / "x.png"], "no folder")
        # the default name beside the run, a link to the run itself
        link = self.tmp / "lnk.h5"
        link.symlink_to(run)
        (self.tmp / "lnk_history.png").symlink_to(run)
        self.refused([SCRIPTS / "plot_history.py", link], "the figure", "lnk_history.png", "that is the input")

    def test_tables(self):
        run = self.run_file
        self.refused(["-m", "mft.sweep", "collect", run, "--csv", run], "--csv", "that is the input")
        self.refused(["-m", "mft.sweep", "collect", run, "--csv", self.tmp / "via-link.png"], "symbolic link")
        self.refused(["-m", "mft.sweep", "collect", run, "--plot", run], "--plot", "that is the input")
        self.refused(["-m", "mft.sweep", "collect", run, "--csv", "x.csv", "--plot", "x.csv"], "one file")
        self.refused(["-m", "mft.sweep", "grid", "model.heads=2,4", "--base", self.ini, "-o", self.ini],
                     "-o", "that is the input")
        bench = self.tmp / "bench.json"
        bench.write_text("{}")
        self.refused(["-m", "mft.scaling", "collect", bench, "--csv", bench], "--csv", "that is the input")


class ToolBoundary(unittest.TestCase):
    """Values a reader lets through but a tool cannot use (text where a
    number belongs, a key missing from /config, NaN particles): the tools'
    one boundary turns the exception into one line naming the input, exit
    status 2, and every warning into one line."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-tool-boundary-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.path = str(self.tmp / "run.h5")
        write_run(self.path)

    def test_a_python_without_h5py(self):
        """A tool started by a Python without numpy and h5py (here: with no
        site packages) runs again under MFT_PYTHON; with none to run, one
        line and exit 2."""
        bare = [PYTHON, "-S", str(SCRIPTS / "plot_history.py"), self.path, "-o", str(self.tmp / "h.png")]
        env = {k: v for k, v in os.environ.items() if k != "MFT_TOOL_PYTHON_CHOSEN"}
        done = subprocess.run(bare, capture_output=True, text=True, timeout=120, env=dict(env, MFT_PYTHON=PYTHON))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue((self.tmp / "h.png").stat().st_size > 0)
        done = subprocess.run(bare, capture_output=True, text=True, timeout=120,
                              env=dict(env, MFT_PYTHON=PYTHON, MFT_TOOL_PYTHON_CHOSEN="1"))
        self.assertEqual((done.returncode, len(done.stderr.splitlines())), (2, 1), done.stderr)
        self.assertIn("lacks numpy, h5py", done.stderr)
        done = subprocess.run(bare, capture_output=True, text=True, timeout=120,
                              env=dict(env, MFT_PYTHON=str(self.tmp / "no-python")))
        self.assertEqual((done.returncode, len(done.stderr.splitlines())), (2, 1), done.stderr)
        self.assertIn("cannot run it", done.stderr)

    def test_crafted_values(self):
        def no_heads(f):
            del f["config"].attrs["model.heads"]

        def text_lambda(f):
            f["config"].attrs["train.lambda"] = "abc"

        def nan_q(f):
            f["particles/Q"][...] = np.nan

        def text_risk(f):
            rows = len(f["history/step"])
            del f["history/risk"]
            f["history/risk"] = np.array([b"a"] * rows)
        for change, tool, words in ((no_heads, "plot_history", ("KeyError", "model.heads")),
                                    (text_lambda, "plot_history", ("ValueError", "abc")),
                                    (nan_q, "plot_particles", ("LinAlgError",)),
                                    (text_risk, "plot_history", ("ValueError",)),
                                    (text_risk, "compare_runs", ("TypeError",))):
            path = changed_copy(self.path, self.tmp, f"{change.__name__}.h5", change)
            inputs = [path, self.path] if tool == "compare_runs" else [path]
            status, out, err = script(tool, *inputs, "-o", self.tmp / "out.png")
            self.assertEqual(status, 2, (tool, change.__name__, err))
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertTrue(err.startswith(f"error: {path}"), err)
            for w in words:
                self.assertIn(w, err)
            self.assertFalse((self.tmp / "out.png").exists())


class HostileSweepArguments(unittest.TestCase):
    """python3 -m mft.sweep collect and run with outputs that cannot be
    written and run names that leave the runs folder: exit status 2, one
    line, nothing run."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-hostile-args-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.run_file = str(self.tmp / "run.h5")
        write_run(self.run_file)
        self.table = self.tmp / "table.csv"
        self.table.write_text("model.heads\n2\n")

    def refused(self, *args, words=()):
        done = subprocess.run([PYTHON, "-m", "mft.sweep", *map(str, args)], env=ENV, capture_output=True,
                              text=True, timeout=60, cwd=self.tmp)
        self.assertEqual(done.returncode, 2, (args, done.stdout, done.stderr))
        self.assertNotIn("Traceback", done.stderr)
        self.assertEqual(len(done.stderr.splitlines()), 1, (args, done.stderr))
        self.assertTrue(done.stderr.startswith("error: "), done.stderr)
        for w in words:
            self.assertIn(w, done.stderr)
        return done

    def test_collect_outputs(self):
        fifo = self.tmp / "fifo.csv"
        os.mkfifo(fifo)
        for option, path, word in (("--csv", self.tmp, "a folder"), ("--csv", fifo, "a FIFO"),
                                   ("--plot", "missing/dir/x.png", "no folder missing/dir"),
                                   ("--csv", "missing/x.csv", "no folder missing")):
            done = self.refused("collect", self.run_file, option, path, words=(option, str(path), word))
            self.assertEqual(done.stdout, "", "refused before any work")
        done = self.refused("collect", self.run_file, "--plot", self.tmp / "x.unknown", words=("--plot", "unknown"))
        self.assertIn("run.h5", done.stdout)  # found when matplotlib writes: the table is printed

    def test_run_arguments(self):
        for name in ("../../x", "a/b", "..", "x..y", "", "a\x1bb"):
            self.refused("run", self.table, "--name", name, "--runs", "r", "--mft", "/bin/false", words=("--name",))
            self.assertFalse((self.tmp / "r").exists(), f"--name {name!r}: the runs folder was made")
        self.refused("run", self.table, "--runs", self.run_file, "--mft", "/bin/false",
                     words=("--runs", "not a folder"))
        self.refused("run", self.table, "--runs", f"{self.run_file}/sub", "--mft", "/bin/false",
                     words=("--runs", "cannot make the folder"))
        with h5py.File(self.run_file, "r") as f:
            self.assertEqual(f.attrs["format"], "mft/1")  # untouched

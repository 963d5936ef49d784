"""A sweep table run on this machine (python3 -m mft.sweep run) with the
built mft, a row that diverges among them, and the collection that reports
the tasks that did not finish (python3 -m mft.sweep collect --report-failed,
which the Slurm collect job runs after any end of the array)."""
import csv
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from fixtures import ENV, PYTHON


@unittest.skipUnless(os.environ.get("MFT"), "needs the built mft (MFT; ctest sets it)")
class LocalSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="mft-sweep-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def sweep(self, *args):
        return subprocess.run([PYTHON, "-m", "mft.sweep", *map(str, args)], env=ENV, cwd=self.tmp,
                              capture_output=True, text=True, timeout=600)

    def test_run_and_collect(self):
        full = self.tmp / "table.csv"
        full.write_text("# two runs and one that diverges\n"
                        "model.heads,train.dtau,data.sequences,data.tokens,model.slices,train.steps\n"
                        "2,0.01,6,5,2,3\n3,0.01,6,5,2,3\n2,1e9,6,5,2,3\n")
        done = self.sweep("run", full, "--jobs", "2", "--ranks", "1", "--name", "t", "--mft", os.environ["MFT"])
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)  # one row diverged
        self.assertIn("row 2: exit 4", done.stdout)
        self.assertRegex(done.stdout, r"failed: runs/sweep-t-2\.h5: stopped at step 0 of 3 \(diverged")
        self.assertIn("2 of 3 runs finished", done.stdout)
        with open(self.tmp / "runs" / "sweep-t.csv") as f:
            collected = list(csv.DictReader(f))
        self.assertEqual([(r["file"], r["M"], r["steps"]) for r in collected],
                         [("sweep-t-0.h5", "2", "3"), ("sweep-t-1.h5", "3", "3")])
        self.assertTrue((self.tmp / "runs" / "sweep-t.png").stat().st_size > 0)
        finished = (self.tmp / "runs" / "sweep-t-0.h5").read_bytes()
        again = self.sweep("run", full, "--jobs", "2", "--ranks", "1", "--name", "t", "--mft", os.environ["MFT"])
        self.assertEqual(again.returncode, 1, again.stderr)
        self.assertEqual((self.tmp / "runs" / "sweep-t-0.h5").read_bytes(), finished,
                         "a rerun changed a finished run (it resumes)")

        # A task that never wrote its file, and a file that is no run.
        (self.tmp / "runs" / "junk.h5").write_text("not HDF5")
        done = self.sweep("collect", "--report-failed", "runs/sweep-t-0.h5", "runs/sweep-t-9.h5", "runs/junk.h5")
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertIn("failed: runs/sweep-t-9.h5: no such file (the task ended before its first snapshot", done.stdout)
        self.assertIn("failed: runs/junk.h5: not an HDF5 file", done.stdout)
        self.assertIn("1 of 3 runs finished", done.stdout)
        done = self.sweep("collect", "--report-failed", "runs/sweep-t-0.h5", "runs/sweep-t-1.h5")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

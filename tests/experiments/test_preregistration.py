"""Pre-registration, on a throwaway git repository holding a copy of
preregistration.py and a driver: --update-docs refuses a driver that differs
from HEAD, the header records the commit, and --check refuses results added
in their driver's own commit, commits outside the history, and files that
record nothing."""
import datetime
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "scripts" / "experiments" / "preregistration.py"


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


class Preregistration(unittest.TestCase):
    def setUp(self):
        if shutil.which("git") is None:
            self.skipTest("no git")
        self.tmp = tempfile.TemporaryDirectory(prefix="mft-prereg-")
        self.repo = Path(self.tmp.name)
        git(self.repo, "init", "-q")
        git(self.repo, "config", "user.email", "test@example.invalid")
        git(self.repo, "config", "user.name", "test")
        (self.repo / "scripts" / "experiments").mkdir(parents=True)
        (self.repo / "docs" / "experiments").mkdir(parents=True)
        shutil.copy(SOURCE, self.repo / "scripts" / "experiments")
        self.driver = self.repo / "scripts" / "experiments" / "toy.py"
        self.driver.write_text('"""Criteria: 1. x < 1."""\n')
        self.commit("the toy driver and its criteria")

    def tearDown(self):
        self.tmp.cleanup()

    def commit(self, message):
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", message)
        return git(self.repo, "rev-parse", "HEAD")

    def call(self, code):
        """Runs `code` with the repository's copy of the module imported as p."""
        script = f"import sys; sys.path.insert(0, {str(self.repo / 'scripts' / 'experiments')!r})\n" \
                 f"import preregistration as p\n{code}"
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)

    def check(self, *extra):
        return subprocess.run([sys.executable, str(self.repo / "scripts" / "experiments" / "preregistration.py"),
                               "--check", *extra], capture_output=True, text=True)

    def write_results(self, commit_line, table=None):
        """The toy's criteria file and CSV; by default the CSV's one row was
        computed from runs made a moment after the criteria's commit."""
        if table is None:
            later = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=2)
            table = f"x,mft_version,created\n0.5,0.1.0 (abc1234),{later.strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
        (self.repo / "docs" / "experiments" / "toy-criteria.txt").write_text(
            commit_line + "criterion: x < 1: holds (0.5)\n")
        (self.repo / "docs" / "experiments" / "toy.csv").write_text(table)

    def record(self):
        head = git(self.repo, "rev-parse", "HEAD")
        done = self.call(f"print('\\n'.join(p.header('toy', {head!r})))")
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_results_from_runs_made_before_their_criteria_are_refused(self):
        record = self.record()
        self.write_results(record, "x,mft_version,created\n0.5,0.1.0 (abc1234),2026-01-01T00:00:00+0000\n"
                                   "0.6,0.1.0 (abc1234),2099-01-01T00:00:00Z\n")
        self.commit("results of a run made before its criteria")
        done = self.check()
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("toy.csv: line 2: its runs were created 2026-01-01T00:00:00+0000, before the criteria's commit",
                      done.stdout)
        self.assertNotIn("line 3", done.stdout)
        self.write_results(record, "x,mft_version,created\n0.5,,2099-01-01T00:00:00Z\n")
        self.commit("a row without its version")
        self.assertIn("toy.csv: line 2: no mft version", self.check().stdout)

    def test_results_without_provenance_pass_only_without_strict(self):
        self.write_results(self.record(), "x\n0.5\n")
        self.commit("results from before the provenance columns")
        done = self.check()
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("without their runs' provenance (rerun pending): 1", done.stdout)
        done = self.check("--strict")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("toy.csv has no provenance columns (mft_version, created): rerun pending", done.stdout)

    def test_the_table_counts_criteria_and_sanity_checks_apart(self):
        self.write_results(self.record())
        criteria = self.repo / "docs" / "experiments" / "toy-criteria.txt"
        criteria.write_text(criteria.read_text() + "criterion: y > 2: fails (1)\nsanity: K is symmetric: holds (0)\n"
                            "not a verdict: holds (0)\n")
        self.commit("the toy's results")
        done = subprocess.run([sys.executable, str(self.repo / "scripts" / "experiments" / "preregistration.py"),
                               "--table"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        row = next(line for line in done.stdout.splitlines() if line.startswith("| toy.py"))
        self.assertTrue(row.startswith("| toy.py | 1 / 1 | 1 / 0 |"), row)
        self.assertIn("| yes |", row)
        self.assertIn("| all | 1 / 1 | 1 / 0 |", done.stdout)

    def test_a_run_from_a_committed_driver_records_its_commit_and_checks_out(self):
        head = git(self.repo, "rev-parse", "HEAD")
        done = self.call("c = p.start('toy'); print(c); print('\\n'.join(p.header('toy', c)))")
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual(lines[0], head)
        self.assertTrue(lines[1].startswith(f"# driver commit: {head}"))
        self.assertTrue(lines[2].startswith(f"# criteria stated in: {head}"))
        self.write_results("\n".join(lines[1:]) + "\n")
        self.commit("the toy's results")
        done = self.check("--strict")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)

    def test_a_plan_wider_than_its_band_is_refused(self):
        head = git(self.repo, "rev-parse", "HEAD")
        done = self.call(f"print('\\n'.join(p.header('toy', {head!r})))")
        self.assertEqual(done.returncode, 0, done.stderr)
        record = done.stdout
        within = ("plan: x < 1: band 0.5; pilot spread 0.1 over 2 seeds (excluded from the verdict); 5 seeds give a "
                  "half-width of 0.124166 (95 % t, 4 dof): within the band\n")
        wider = ("plan: y within 0.05: band 0.05; pilot spread 0.17 over 2 seeds (excluded from the verdict); 5 seeds "
                 "give a half-width of 0.211083 (95 % t, 4 dof): exceeds the band: 50 seeds needed\n")
        self.write_results(record + within)
        self.commit("the toy's results, its plan within the band")
        done = self.check("--strict")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.write_results(record + within + wider)
        self.commit("a plan wider than its band")
        done = self.check("--strict")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("plan 'y within 0.05': 5 seeds give a half-width of 0.211083, wider than its band 0.05",
                      done.stdout)

    def test_a_changed_driver_is_refused_before_and_during_the_run(self):
        self.driver.write_text('"""Criteria: 1. x < 2."""\n')
        done = self.call("p.start('toy')")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("toy.py differs from HEAD", done.stderr)
        git(self.repo, "checkout", "--", ".")
        head = git(self.repo, "rev-parse", "HEAD")
        (self.repo / "scripts" / "experiments" / "common.py").write_text("# new shared code\n")
        done = self.call(f"p.header('toy', {head!r})")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("changed during the run", done.stderr)

    def test_a_changed_driver_that_it_imports_is_refused(self):
        sibling = self.repo / "scripts" / "experiments" / "sibling.py"
        sibling.write_text("DISTANCE = 1\n")
        self.driver.write_text('"""Criteria: 1. x < 1."""\nfrom sibling import DISTANCE\n')
        self.commit("a driver reading another driver's code")
        sibling.write_text("DISTANCE = 2\n")
        done = self.call("p.start('toy')")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("sibling.py differs from HEAD", done.stderr)
        # A driver it does not import may change meanwhile.
        git(self.repo, "checkout", "--", ".")
        (self.repo / "scripts" / "experiments" / "other.py").write_text("# another driver\n")
        self.assertEqual(self.call("p.start('toy')").returncode, 0)

    def test_a_commit_outside_the_history_is_refused(self):
        self.write_results("# driver commit: " + "0" * 40 + "\n")
        self.commit("results naming no commit")
        done = self.check()
        self.assertEqual(done.returncode, 1)
        self.assertIn("not in this history", done.stdout)
        # A commit on another branch exists but is not an ancestor.
        git(self.repo, "checkout", "-q", "-b", "side")
        self.driver.write_text('"""Criteria: 1. x < 5."""\n')
        side = self.commit("a driver on a side branch")
        git(self.repo, "checkout", "-q", "-")
        self.write_results(f"# driver commit: {side}\n")
        self.commit("results naming the side branch")
        done = self.check()
        self.assertEqual(done.returncode, 1)
        self.assertIn("not an ancestor", done.stdout)

    def test_a_driver_changed_between_the_run_and_its_results_is_refused(self):
        head = git(self.repo, "rev-parse", "HEAD")
        self.driver.write_text('"""Criteria: 1. x < 3 (changed after the results were seen)."""\n')
        self.write_results(f"# driver commit: {head}\n")
        self.commit("criteria changed together with the results")
        done = self.check()
        self.assertEqual(done.returncode, 1, done.stdout)
        self.assertIn("changed between", done.stdout)

    def test_a_file_without_a_record_fails_and_none_fails_only_strictly(self):
        self.write_results("")
        self.commit("results without a record")
        done = self.check()
        self.assertEqual(done.returncode, 1)
        self.assertIn("records no driver commit", done.stdout)
        self.write_results("# driver commit: none (added together)\n")
        self.commit("marked")
        self.assertEqual(self.check().returncode, 0)
        done = self.check("--strict")
        self.assertEqual(done.returncode, 1)
        self.assertIn("not pre-registered", done.stdout)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Pre-registration a reader can check with git.

A driver states its criteria in its own text (the docstring and the
thresholds in its code), committed before its full run. `--update-docs`
runs only from a tree whose driver, the experiments' shared code and mft's
sources are those of a commit (HEAD when the run starts, and still that
commit's when the results are written), and the criteria file records it:

  # driver commit: <sha>  (the tree the results came from)
  # criteria stated in: <sha>  (the last commit that changed the driver)

so `git show <sha>:scripts/experiments/NAME.py` is the driver that wrote the
results, and the commit that added the results comes after it.

Results older than this rule whose driver, criteria and results were added
in one commit say so: `# driver commit: none (...)`; they are not
pre-registered until their driver is rerun from a commit.

  python3 scripts/experiments/preregistration.py --check [--strict]
  python3 scripts/experiments/preregistration.py --table

--check refuses a criteria file with a `plan:` line (stats.Plan: a
criterion's band, the pilot's spread and the seeds) whose planned half-width
exceeds its band. It exits 0 when every criteria file records a driver commit that is
an ancestor of HEAD, holds the driver, is not the commit that added the
file's current content and whose driver is the one of that commit (no
criterion edited between the run and its results), or says `none` (--strict: none may say `none`); 1
with one line per file that fails; 77 where there is no git history to check
against (an installed copy, a shallow clone). --table prints the table
docs/EXPERIMENTS.md quotes.
"""
import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# What the results depend on besides the driver: if any of it differs from
# the recorded commit, that commit does not describe the run.
SHARED = ["scripts/experiments/common.py", "scripts/experiments/stats.py", "scripts/experiments/fits.py",
          "scripts/experiments/baselines.py", "scripts/experiments/preregistration.py", "scripts/mft",
          "scripts/make_digits.py", "scripts/make_permutation_pairs.py", "src", "include", "apps",
          "CMakeLists.txt"]
DRIVER_LINE = re.compile(r"^# driver commit: ([0-9a-f]{40}|none)\b")
# A criterion's power, as stats.Plan.line writes it.
PLAN_LINE = re.compile(r"^plan: (?P<name>.+?): band (?P<band>\S+); pilot spread (?P<spread>\S+) over \d+ seeds .*?"
                       r"(?P<seeds>\d+) seeds give a half-width of (?P<half>\S+) ")
STATED_LINE = re.compile(r"^# criteria stated in: ([0-9a-f]{40})\b")
SKIP = 77


class PreregistrationError(Exception):
    pass


def git(*args, check=True):
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise PreregistrationError(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done


def has_history():
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True,
                          text=True)
    return done.returncode == 0 and done.stdout.strip() == "false"


def driver_path(name):
    return f"scripts/experiments/{name}.py"


def protected(name):
    """The driver, the experiments' drivers it imports (d_and_m reads
    mean_field's coupling distance), and SHARED."""
    seen, todo = set(), [name]
    while todo:
        module = todo.pop()
        if module in seen or not (ROOT / driver_path(module)).is_file():
            continue
        seen.add(module)
        text = (ROOT / driver_path(module)).read_text()
        todo += re.findall(r"^(?:from|import)\s+(\w+)", text, re.MULTILINE)
    return sorted(driver_path(module) for module in seen) + SHARED


def differences(commit, name):
    """The protected paths of driver `name` that differ from `commit` in the
    work tree (changed, staged or untracked)."""
    paths = protected(name)
    changed = git("diff", "--name-only", commit, "--", *paths).stdout.split()
    untracked = git("ls-files", "--others", "--exclude-standard", "--", *paths).stdout.split()
    return sorted(set(changed) | set(untracked))


def start(name):
    """The commit a run of driver `name` with --update-docs comes from: HEAD,
    provided the driver and everything it depends on equal HEAD's. Raises
    PreregistrationError naming what differs."""
    if not has_history():
        raise PreregistrationError("--update-docs needs a git checkout with its history (to record the driver's "
                                   "commit)")
    head = git("rev-parse", "HEAD").stdout.strip()
    changed = differences(head, name)
    if changed:
        raise PreregistrationError(f"--update-docs: {', '.join(changed[:4])}{' ...' if len(changed) > 4 else ''} "
                                   "differs from HEAD; commit the driver and its criteria first, then run it")
    return head


def header(name, commit):
    """The lines a criteria file written from `commit` starts with; raises if
    the tree no longer equals `commit` where the driver depends on it."""
    changed = differences(commit, name)
    if changed:
        raise PreregistrationError(f"--update-docs: {', '.join(changed[:4])} changed during the run (it started "
                                   f"from {commit[:12]}); rerun from a committed tree")
    stated = git("log", "-1", "--format=%H", commit, "--", driver_path(name)).stdout.strip()
    return [f"# driver commit: {commit} (the tree these results came from)",
            f"# criteria stated in: {stated} (the last commit that changed {driver_path(name)})"]


def recorded(path):
    """(driver commit, criteria commit or None) recorded in a criteria file."""
    driver = stated = None
    for line in Path(path).read_text().splitlines():
        driver = driver or (m.group(1) if (m := DRIVER_LINE.match(line)) else None)
        stated = stated or (m.group(1) if (m := STATED_LINE.match(line)) else None)
    return driver, stated


def last_change(path):
    """The commit that added the current content of `path`, or None if the
    work tree's content is not committed yet."""
    rel = str(Path(path).resolve().relative_to(ROOT))
    if git("status", "--porcelain", "--", rel).stdout.strip():
        return None
    return git("log", "-1", "--format=%H", "--", rel).stdout.strip() or None


def plan_problems(text, path):
    """The `plan:` lines of a criteria file's text whose planned half-width
    exceeds the criterion's band, or that do not read: one line each. A
    design that cannot resolve its band could only ever fail (or, for a
    bound, hold by luck): add seeds, widen the band with a reason, or drop
    the criterion."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("plan:"):
            continue
        m = PLAN_LINE.match(line)
        try:
            band, half = float(m["band"]), float(m["half"])
        except (TypeError, ValueError):
            problems.append(f"{path}: line {number}: a plan that does not read: {line}")
            continue
        if not half <= band:
            problems.append(f"{path}: plan {m['name']!r}: {m['seeds']} seeds give a half-width of {m['half']}, "
                            f"wider than its band {m['band']}: the criterion cannot resolve it (add seeds, widen "
                            "the band with a reason, or drop it)")
    return problems


def check_file(path, strict=False):
    """Problems with one criteria file's record (empty: it checks out)."""
    name = Path(path).name[: -len("-criteria.txt")]
    path = Path(path).resolve().relative_to(ROOT)
    plans = plan_problems((ROOT / path).read_text(), path)
    if plans:
        return plans
    driver, _ = recorded(ROOT / path)
    if driver is None:
        return [f"{path}: records no driver commit"]
    if driver == "none":
        return [f"{path}: not pre-registered (driver, criteria and results in one commit)"] if strict else []
    problems = []
    if git("cat-file", "-e", f"{driver}^{{commit}}", check=False).returncode != 0:
        return [f"{path}: driver commit {driver[:12]} is not in this history"]
    if git("merge-base", "--is-ancestor", driver, "HEAD", check=False).returncode != 0:
        problems.append(f"{path}: driver commit {driver[:12]} is not an ancestor of HEAD")
    if git("cat-file", "-e", f"{driver}:{driver_path(name)}", check=False).returncode != 0:
        problems.append(f"{path}: commit {driver[:12]} has no {driver_path(name)}")
    if last_change(ROOT / path) == driver:
        problems.append(f"{path}: its results were added in the driver's own commit {driver[:12]}")
    # The results' commit: the last change of the CSV (a header added to an
    # older criteria file later does not move it).
    csv = (ROOT / path).with_name(name + ".csv")
    added = last_change(csv if csv.is_file() else ROOT / path)
    if added and git("diff", "--quiet", driver, added, "--", driver_path(name), check=False).returncode != 0:
        problems.append(f"{path}: {driver_path(name)} changed between the run ({driver[:12]}) and the commit that "
                        f"added its results ({added[:12]})")
    return problems


def criteria_files():
    return sorted((ROOT / "docs" / "experiments").glob("*-criteria.txt"))


def table():
    """A Markdown table: per driver, the commit that stated its criteria,
    the one its results came from and the one that added them (the last
    change of its CSV), and a later change of the driver not yet run."""
    rows = ["| driver | criteria stated in | run from | results added in | driver changed since |",
            "|---|---|---|---|---|"]
    short = (lambda c: c[:10] if c else "(uncommitted)")
    for path in criteria_files():
        name = path.name[: -len("-criteria.txt")]
        driver, stated = recorded(path)
        added = last_change(path.with_name(name + ".csv"))
        latest = git("log", "-1", "--format=%H", "--", driver_path(name)).stdout.strip()
        redesigned = "" if latest in (stated, driver) else f"{short(latest)} (not run since)"
        if driver == "none":
            rows.append(f"| {name}.py | not pre-registered | (driver and results in one commit) | {short(added)} | "
                        f"{redesigned} |")
        else:
            rows.append(f"| {name}.py | {short(stated) if stated else '(not recorded)'} | {short(driver)} | "
                        f"{short(added)} | {redesigned} |")
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true")
    g.add_argument("--table", action="store_true")
    p.add_argument("--strict", action="store_true", help="with --check: no criteria file may say `none`")
    options = p.parse_args()
    if not has_history():
        print("preregistration: no git history here (an installed copy or a shallow clone): nothing to check")
        sys.exit(SKIP)
    try:
        if options.table:
            print(table())
            return
        files = criteria_files()
        problems = [line for path in files for line in check_file(path, options.strict)]
        for line in problems:
            print(line)
        unregistered = [path.name for path in files if recorded(path)[0] == "none"]
        failed = {pr.split(":")[0] for pr in problems}
        registered = [p for p in files if recorded(p)[0] not in (None, "none")
                      and str(p.relative_to(ROOT)) not in failed]
        print(f"preregistration: {len(files) - len(failed)} of {len(files)} criteria files check out; "
              f"{len(registered)} record a driver commit that precedes their results"
              + (f"; not pre-registered (rerun pending): {', '.join(unregistered)}" if unregistered else ""))
        sys.exit(1 if problems else 0)
    except PreregistrationError as e:
        sys.exit(f"preregistration: error: {e}")


if __name__ == "__main__":
    main()

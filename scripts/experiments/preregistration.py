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
criterion edited between the run and its results), or says `none`; and
when every row of a results CSV with provenance columns (`mft_version`,
`created`: the runs' version and earliest creation time, common.write_csv)
comes from runs created after the commit that stated its criteria. --strict:
none may say `none` and every results CSV must carry its provenance. Exit 1
with one line per problem; 77 where there is no git history to check
against (an installed copy, a shallow clone). --table prints the table
docs/EXPERIMENTS.md quotes, criteria and sanity checks counted apart.
"""
import argparse
import csv
import datetime
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# What the results depend on besides the driver: if any of it differs from
# the recorded commit, that commit does not describe the run.
SHARED = ["scripts/experiments/common.py", "scripts/experiments/endings.py", "scripts/experiments/inputs.py",
          "scripts/experiments/stats.py", "scripts/experiments/fits.py",
          "scripts/experiments/baselines.py", "scripts/experiments/preregistration.py", "scripts/mft",
          "scripts/make_digits.py", "scripts/make_permutation_pairs.py", "src", "include", "apps",
          "CMakeLists.txt"]
DRIVER_LINE = re.compile(r"^# driver commit: ([0-9a-f]{40}|none)\b")
# A criterion's power, as stats.Plan.line writes it.
PLAN_LINE = re.compile(r"^plan: (?P<name>.+?): band (?P<band>\S+); pilot spread (?P<spread>\S+) over \d+ seeds .*?"
                       r"(?P<seeds>\d+) seeds give a half-width of (?P<half>\S+) ")
# A verdict, as common.verdict writes it: a criterion (a claim about the
# theory, able to fail) or a sanity check (an identity or a check of the
# design, which must hold).
VERDICT_LINE = re.compile(r"^(criterion|sanity): (.*): (holds|fails) \((.*)\)$")
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


def parse_time(text):
    """An ISO 8601 time as mft writes it (`2026-12-05T06:30:29+0000`) or as
    git and the CSVs do (`...+00:00`, `...Z`), as an aware datetime."""
    text = text.strip()
    text = text[:-1] + "+00:00" if text.endswith("Z") else text
    if re.search(r"[+-]\d{4}$", text):
        text = text[:-2] + ":" + text[-2:]
    when = datetime.datetime.fromisoformat(text)
    if when.tzinfo is None:
        raise ValueError(f"a time without its zone: {text}")
    return when


def commit_time(commit):
    """The committer time of `commit`."""
    return parse_time(git("show", "-s", "--format=%cI", commit).stdout.strip())


def provenance_problems(csv_path, commit):
    """None when the results CSV has no provenance columns (results from
    before them); else the rows whose runs were created before `commit`
    (the criteria's commit) or that lack a version or a time, one line
    each (at most three, then a count)."""
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        columns, rows = reader.fieldnames or [], list(reader)
    if "created" not in columns or "mft_version" not in columns:
        return None
    stated = commit_time(commit)
    problems = []
    for number, row in enumerate(rows, 2):
        try:
            made = parse_time(row["created"])
        except (TypeError, ValueError):
            problems.append(f"{csv_path.name}: line {number}: no creation time ({row['created']!r})")
            continue
        if not row["mft_version"]:
            problems.append(f"{csv_path.name}: line {number}: no mft version")
        elif made <= stated:
            problems.append(f"{csv_path.name}: line {number}: its runs were created {row['created']}, before the "
                            f"criteria's commit {commit[:12]} ({stated.isoformat()})")
    return problems[:3] + ([f"{csv_path.name}: ... {len(problems) - 3} more rows"] if len(problems) > 3 else [])


def parse_verdicts(text):
    """[(kind, text, "holds" or "fails", numbers)] for every verdict line of `text`."""
    return [m.groups() for m in map(VERDICT_LINE.match, text.splitlines()) if m]


def verdict_counts(text):
    """{(kind, verdict): count} over the verdict lines of `text`."""
    counts = {(k, v): 0 for k in ("criterion", "sanity") for v in ("holds", "fails")}
    for kind, _, verdict, _ in parse_verdicts(text):
        counts[kind, verdict] += 1
    return counts


def has_provenance(criteria_path):
    """Whether the results CSV beside a criteria file carries its runs'
    provenance columns."""
    results = Path(criteria_path).with_name(Path(criteria_path).name[: -len("-criteria.txt")] + ".csv")
    driver, stated = recorded(criteria_path)
    return results.is_file() and driver not in (None, "none") and \
        provenance_problems(results, stated or driver) is not None


def check_file(path, strict=False):
    """Problems with one criteria file's record (empty: it checks out)."""
    name = Path(path).name[: -len("-criteria.txt")]
    path = Path(path).resolve().relative_to(ROOT)
    plans = plan_problems((ROOT / path).read_text(), path)
    if plans:
        return plans
    driver, stated = recorded(ROOT / path)
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
    results = (ROOT / path).with_name(name + ".csv")
    added = last_change(results if results.is_file() else ROOT / path)
    if added and git("diff", "--quiet", driver, added, "--", driver_path(name), check=False).returncode != 0:
        problems.append(f"{path}: {driver_path(name)} changed between the run ({driver[:12]}) and the commit that "
                        f"added its results ({added[:12]})")
    if results.is_file():
        late = provenance_problems(results, stated or driver)
        if late is None and strict:
            problems.append(f"{path}: {results.name} has no provenance columns (mft_version, created): rerun pending")
        problems += [f"{path}: {line}" for line in late or []]
    return problems


def criteria_files():
    return sorted((ROOT / "docs" / "experiments").glob("*-criteria.txt"))


def table():
    """A Markdown table: per driver, its criteria and its sanity checks
    (holds / fails, counted apart), the commit that stated its criteria, the
    one its results came from and the one that added them (the last change
    of its CSV), whether the CSV carries its runs' provenance, and a later
    change of the driver not yet run; a last row sums the verdicts."""
    rows = ["| driver | criteria: hold / fail | sanity: hold / fail | criteria stated in | run from | "
            "results added in | provenance | driver changed since |",
            "|---|---|---|---|---|---|---|---|"]
    short = (lambda c: c[:10] if c else "(uncommitted)")
    total = {}
    for path in criteria_files():
        name = path.name[: -len("-criteria.txt")]
        driver, stated = recorded(path)
        counts = verdict_counts(path.read_text())
        total = {key: total.get(key, 0) + n for key, n in counts.items()}
        verdicts = (f"{counts['criterion', 'holds']} / {counts['criterion', 'fails']} | "
                    f"{counts['sanity', 'holds']} / {counts['sanity', 'fails']}")
        added = last_change(path.with_name(name + ".csv"))
        latest = git("log", "-1", "--format=%H", "--", driver_path(name)).stdout.strip()
        redesigned = "" if latest in (stated, driver) else f"{short(latest)} (not run since)"
        if driver == "none":
            rows.append(f"| {name}.py | {verdicts} | not pre-registered | (driver and results in one commit) | "
                        f"{short(added)} | no | {redesigned} |")
        else:
            rows.append(f"| {name}.py | {verdicts} | {short(stated) if stated else '(not recorded)'} | "
                        f"{short(driver)} | {short(added)} | {'yes' if has_provenance(path) else 'no'} | {redesigned} |")
    rows.append(f"| all | {total.get(('criterion', 'holds'), 0)} / {total.get(('criterion', 'fails'), 0)} | "
                f"{total.get(('sanity', 'holds'), 0)} / {total.get(('sanity', 'fails'), 0)} | | | | | |")
    return "\n".join(rows)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true")
    g.add_argument("--table", action="store_true")
    p.add_argument("--strict", action="store_true", help="with --check: no criteria file may say `none`, and every "
                   "results CSV carries its runs' provenance")
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
        bare = [path.name for path in registered if not has_provenance(path)]
        print(f"preregistration: {len(files) - len(failed)} of {len(files)} criteria files check out; "
              f"{len(registered)} record a driver commit that precedes their results"
              + (f"; not pre-registered (rerun pending): {', '.join(unregistered)}" if unregistered else "")
              + (f"; results without their runs' provenance (rerun pending): {len(bare)}" if bare else ""))
        sys.exit(1 if problems else 0)
    except PreregistrationError as e:
        sys.exit(f"preregistration: error: {e}")


if __name__ == "__main__":
    main()

"""The machinery every experiment driver shares: its options, running mft
(locally, several runs at once, or as a Slurm job array through
scripts/slurm/submit_sweep.sh), and writing the CSV and the figure. It
also hands the drivers endings.py (a run's history and where it ended)
and inputs.py (the files a driver writes for mft to read).

A driver lists its runs as `Run(name, args)` (args: {mft key: value}); the
runner gives back {name: path of the run file}. Locally, a run whose file is
complete is reused (`--fresh` reruns), so a driver interrupted and restarted
only runs what is missing. With `--slurm` the runs become one table, one
array job and the driver exits; `--from-sweep JOB` later reads
runs/sweep-JOB-<row>.h5 in table order and does the analysis.

Outputs: <name>.csv, <name>-criteria.txt and exp_<name>.png (with
`--quick`: <name>-quick.csv, ...) in runs/experiments/, beside the run
files, unless --out (and --figures) say otherwise. `--update-docs` writes
them where docs/EXPERIMENTS.md quotes them instead: the CSV and criteria in
docs/experiments/, the figure in docs/figures/ (the committed results are
only replaced on purpose). Numbers in the CSV carry 6 significant digits,
the digits that reproduce on one machine.
"""
import argparse
import concurrent.futures
import csv
import datetime
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from chosen_python import CHECKOUT, HERE  # the package mft on sys.path, a checkout or an installation

# ROOT holds runs/ (and, in a checkout, docs/): the checkout, or the folder
# an installed driver runs in. SCRIPTS holds env.sh, make_digits.py and
# slurm/ (the programs of an installation are in PREFIX/bin).
SCRIPTS = HERE.parent
ROOT = HERE.parents[1] if CHECKOUT else Path.cwd()
from mft import io as mft_io  # noqa: E402,F401  (the drivers read run files through common.mft_io)

import preregistration  # noqa: E402
# A run's history and where it ended, and the files drivers write for mft
# to read, live in modules of their own; drivers reach them through common.
from endings import (ENDINGS, INTERPOLATED, PLATEAU, SEPARATED_FRACTION, SEPARATED_MARGIN,  # noqa: E402,F401
                     change, ending, endings_text, history, last_fifth, margin_fraction, reached, run_ending,
                     seed_histories)
from inputs import content_file, data_file, particle_file, residual_scaled_data  # noqa: E402,F401

# The batch scripts (a sweep's collect job) run the analysis with the
# driver's own interpreter, which has h5py.
os.environ.setdefault("MFT_PYTHON", sys.executable)

DIGITS = 6
EXIT_DIVERGED = 4  # mft's exit code for a run that became non-finite


@dataclass
class Run:
    name: str
    args: dict
    command: str = "train"  # or "ntk", "forward"
    extra: list = field(default_factory=list)  # options without a value (ntk: --cgf)


class DriverParser(argparse.ArgumentParser):
    """The drivers' options; parse_args fills in --out and --figures from
    --runs and --update-docs (see the module's doc)."""

    def parse_args(self, *args, **kwargs):
        options = super().parse_args(*args, **kwargs)
        if options.update_docs and not CHECKOUT:
            self.error("--update-docs: only in a checkout of mft (an installed driver has no docs/ to update)")
        options.commit = None
        if options.update_docs:
            # Pre-registration: the results replace the committed ones only
            # from a committed driver, whose commit the criteria file records.
            try:
                options.commit = preregistration.start(driver_name())
            except preregistration.PreregistrationError as e:
                self.exit(2, f"error: {e}\n")
        if options.out is None:
            options.out = str(ROOT / "docs" / "experiments") if options.update_docs else options.runs
        if options.figures is None:
            options.figures = str(ROOT / "docs" / "figures") if options.update_docs else options.out
        return options


def driver_name():
    """The running driver's name (scripts/experiments/NAME.py)."""
    return Path(sys.modules["__main__"].__file__).stem


def _still_committed(options):
    """The lines a criteria file starts with under --update-docs (the driver's
    commit), after checking that the tree still equals it; exits if not."""
    if not getattr(options, "update_docs", False):
        return []
    try:
        return preregistration.header(driver_name(), options.commit)
    except preregistration.PreregistrationError as e:
        raise SystemExit(f"error: {e}")


def parser(doc):
    p = DriverParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="the reduced version (under two minutes on 2 cores)")
    p.add_argument("--out", default=None, help="folder of the CSV and criteria (default runs/experiments; "
                   "with --update-docs docs/experiments)")
    p.add_argument("--figures", default=None, help="folder of the figure (default: --out; with --update-docs "
                   "docs/figures)")
    p.add_argument("--update-docs", action="store_true", help="write the CSV, criteria and figure where "
                   "docs/EXPERIMENTS.md quotes them, replacing the committed results")
    p.add_argument("--runs", default=str(ROOT / "runs" / "experiments"), help="folder of the run files")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at once (local)")
    p.add_argument("--ranks", type=int, default=1, help="MPI ranks per run (local)")
    p.add_argument("--fresh", action="store_true", help="rerun runs whose file exists")
    p.add_argument("--slurm", action="store_true", help="submit the runs as a Slurm array job and exit")
    p.add_argument("--from-sweep", metavar="JOB", help="analyse runs/sweep-JOB-<row>.h5 of an earlier --slurm")
    return p


def mft_binary():
    if not CHECKOUT:
        return os.environ.get("MFT", str(HERE.parents[2] / "bin" / "mft"))
    return os.environ.get("MFT", str(ROOT / os.environ.get("MFT_BUILD_NAME", "build") / "apps" / "mft"))


def mpiexec():
    return os.environ.get("MPIEXEC", "mpirun")


def _same_value(stored, wanted):
    if isinstance(stored, bytes):
        stored = stored.decode()
    try:
        return abs(float(stored) - float(wanted)) <= 1e-12 * max(1.0, abs(float(wanted)))
    except (TypeError, ValueError):
        return str(stored) == str(wanted)


def _record(run):
    """The options of a run, as the .options file beside its output holds
    them. A run that reads another run's file (`from`) records that run's
    options too, so that it is redone when its source was redone otherwise."""
    items = [run.command] + [f"{k}={v}" for k, v in sorted(run.args.items())] + list(run.extra)
    if "from" in run.args:
        source = Path(run.args["from"]).with_suffix(".options")
        items.append("source: " + (source.read_text() if source.is_file() else "(none)"))
    return repr(items)


def _complete(path, run):
    """Whether `path` holds the finished run `run`: the record written beside
    it after it finished names exactly these options (a key the run leaves at
    its default must not match a file made with another value)."""
    if not path.is_file():
        return False
    record = path.with_suffix(".options")
    if not record.is_file() or record.read_text() != _record(run):
        return False
    try:
        import h5py
        with h5py.File(path, "r") as f:
            config = f["config"].attrs
            for key, value in run.args.items():
                if "." not in key:  # a command option (ntk --from, --snapshot), not a configuration key
                    continue
                if key not in config or not _same_value(config[key], value):
                    return False
            if run.command in ("ntk", "forward"):
                return run.command in f
            return "history/step" in f and int(f["history/step"][-1]) >= int(config["train.steps"])
    except (OSError, KeyError, IndexError, ValueError):
        return False


def _finished(path):
    """Whether a training run file reached its train.steps."""
    try:
        import h5py
        with h5py.File(path, "r") as f:
            rows = int(f["history"].attrs.get("complete", len(f["history/step"])))
            return rows > 0 and int(f["history/step"][rows - 1]) >= int(f["config"].attrs["train.steps"])
    except (OSError, KeyError, IndexError, ValueError):
        return False


# The initial scales every recorded result was computed with (mft's
# defaults before they scaled with d, d_h and d_f): a driver's run that does
# not give one takes it from here, so the records reproduce. They are not part
# of a run's record (.options), which finished runs keep.
RECORDED_SCALES = {"init.sigma_qk": 0.5, "init.sigma_v": 1.0, "init.sigma_w1": 0.5, "init.sigma_w2": 0.5}


def _argv(run, path):
    argv = [mft_binary(), run.command]
    for key, value in run.args.items():
        argv += [f"--{key}", str(value)]
    if "from" not in run.args:  # a run of another's particles takes that run's configuration
        for key, value in RECORDED_SCALES.items():
            if key not in run.args:
                argv += [f"--{key}", str(value)]
    argv += list(run.extra)
    argv += ["--output.file", str(path), "--output.overwrite", "true"]
    if run.command == "train":
        argv += ["--train.print_every", "1000000"]
    return argv


def _run_one(run, path, ranks, fresh, not_before=None):
    """Runs `run` into `path`, or reuses the file of an earlier invocation
    (not one created before `not_before`: under --update-docs the driver's
    commit, so that every number comes from a run made after its criteria)."""
    marker = path.with_suffix(".diverged")
    if not_before is not None:
        stamp = run_stamp(path) if path.is_file() else None
        made = stamp[1] if stamp else None
        if made is None and marker.is_file():
            made = datetime.datetime.fromtimestamp(marker.stat().st_mtime, datetime.timezone.utc)
        fresh = fresh or made is None or made <= not_before
    if not fresh and marker.is_file() and marker.read_text() == _record(run):
        return path, "diverged (earlier)"
    if not fresh and _complete(path, run):
        return path, "reused"
    marker.unlink(missing_ok=True)
    path.with_suffix(".options").unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    # The project's one definition of the environment mft runs in (BLAS
    # threads and core, Open MPI as root, HDF5 locking): scripts/env.sh.
    argv = ["bash", "-c", 'source "$0" && exec "$@"', str(SCRIPTS / "env.sh"), mpiexec(), "-n", str(ranks)]
    if ranks > (os.cpu_count() or 1):
        argv.append("--oversubscribe")
    argv += _argv(run, path)
    log = path.with_suffix(".log")
    # Several runs at once: Open MPI binds every job's rank 0 to core 0, so
    # they would share one core while the others idled. Bind nothing.
    env = dict(os.environ, OMPI_MCA_hwloc_base_binding_policy=os.environ.get("OMPI_MCA_hwloc_base_binding_policy",
                                                                              "none"))
    with open(log, "w") as out:
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    if done.returncode != 0:
        lines = log.read_text().strip().splitlines()
        errors = [line for line in lines if line.startswith("mft: error")] or lines[-1:] or ["(no output)"]
        if done.returncode == EXIT_DIVERGED:
            # A result, not a failure: this model diverges with this step.
            marker.write_text(_record(run))
            return path, f"diverged: {errors[0]}"
        return path, f"failed (exit {done.returncode}): {errors[0]}"
    path.with_suffix(".options").write_text(_record(run))
    return path, "ran"


def execute(name, runs, options):
    """Runs (or finds) every run; returns {run name: path}, without the runs
    that diverged (a token or a gradient became non-finite: a result the
    drivers report, not a failure). Exits after submitting with --slurm."""
    folder = Path(options.runs) / (name + ("-quick" if options.quick else ""))
    if options.from_sweep:
        paths = {r.name: ROOT / "runs" / f"sweep-{options.from_sweep}-{i}.h5" for i, r in enumerate(runs)}
        missing = [str(p) for p in paths.values() if not p.is_file()]
        if missing:
            sys.exit(f"error: --from-sweep {options.from_sweep}: {len(missing)} run files missing, e.g. {missing[0]}")
        # A diverged run keeps its file: it ends before its last step.
        for run in runs:
            if run.command == "train" and not _finished(paths[run.name]):
                print(f"[{name}] {run.name}: diverged or unfinished ({paths[run.name]})", flush=True)
                paths.pop(run.name)
        return paths
    if options.slurm:
        submit_slurm(name, runs, folder)
        sys.exit(0)
    paths = {r.name: folder / f"{r.name}.h5" for r in runs}
    jobs = max(1, options.jobs // max(1, options.ranks))
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        not_before = preregistration.commit_time(options.commit) if getattr(options, "commit", None) else None
        futures = {pool.submit(_run_one, r, paths[r.name], options.ranks, options.fresh, not_before): r
                   for r in runs}
        # (paths loses the diverged runs only after every future is made)
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            run = futures[future]
            path, status = future.result()
            print(f"[{name}] {done}/{len(runs)} {run.name}: {status}", flush=True)
            if status.startswith("failed"):
                failures.append(f"{run.name}: {status} (log {path.with_suffix('.log')})")
            if status.startswith("diverged"):
                paths.pop(run.name, None)
    if failures:
        sys.exit(f"error: {len(failures)} runs failed; first: {failures[0]}")
    return paths


def submit_slurm(name, runs, folder):
    if any(r.command != "train" for r in runs):
        sys.exit(f"error: --slurm: {name} needs `mft ntk` runs, which the sweep array does not run; run it locally")
    runs = [Run(r.name, {**RECORDED_SCALES, **r.args}, r.command, r.extra) for r in runs]
    keys = []
    for r in runs:
        keys += [k for k in r.args if k not in keys]
    folder.mkdir(parents=True, exist_ok=True)
    table = folder / f"{name}-table.csv"
    with open(table, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(keys)
        for r in runs:
            row = [r.args.get(k, "") for k in keys]
            if any("\n" in str(v) or "\r" in str(v) for v in row):
                sys.exit(f"error: --slurm: a value with a line break in run {r.name}; the sweep table cannot hold it")
            w.writerow(row)
    cmd = [str(SCRIPTS / "slurm" / "submit_sweep.sh"), str(table)]
    print("submitting:", " ".join(shlex.quote(c) for c in cmd))
    subprocess.run(cmd, check=True)
    print(f"then: {sys.argv[0]} {'--quick ' if '--quick' in sys.argv else ''}--from-sweep ARRAYJOB")


def fmt(x):
    """A number as the CSV holds it: 6 significant digits."""
    if isinstance(x, (int,)) and not isinstance(x, bool):
        return str(x)
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    return f"{v:.{DIGITS}g}"


# Provenance: the columns write_csv adds to every row that names its run
# files (row["runs"]), so that a reader can check when each number was
# computed and by which mft (preregistration.py --check compares `created`
# with the criteria's commit).
PROVENANCE = ("mft_version", "created")


def run_stamp(path):
    """(mft version, creation time) of the run file `path`, or None where it
    has none (no file, or one from before these attributes)."""
    try:
        import h5py
        with h5py.File(path, "r") as f:
            values = [f.attrs.get(key, b"") for key in PROVENANCE]
        version, when = (v.decode() if isinstance(v, bytes) else str(v) for v in values)
        return (version, preregistration.parse_time(when)) if version and when else None
    except (OSError, ValueError):
        return None


def provenance(paths, stamps=None):
    """{"mft_version", "created"} of the run files `paths`: their versions
    (one, or several joined by " + "), and the earliest creation time (ISO
    8601, UTC), the one a check against the criteria's commit needs.
    stamps: {path: run_stamp(path)} already read (filled here), so that rows
    sharing runs read each file once."""
    stamps = {} if stamps is None else stamps
    versions, created = [], []
    for path in paths:
        if path not in stamps:
            stamps[path] = run_stamp(path)
        if stamps[path] is None:
            raise SystemExit(f"error: {path}: no mft_version or created attribute (a file from before them)")
        version, when = stamps[path]
        versions += [version] if version not in versions else []
        created.append(when)
    if not created:
        raise SystemExit("error: a results row names no run file")
    return {"mft_version": " + ".join(versions), "created": min(created).strftime("%Y-%m-%dT%H:%M:%SZ")}


def write_csv(name, options, columns, rows):
    """Writes the rows' `columns`, and, when the rows name their run files
    (row["runs"]: the files the row's numbers come from), each row's
    provenance. Under --update-docs every row must name them."""
    _still_committed(options)
    named = [("runs" in row) for row in rows]
    if any(named) and not all(named):
        raise SystemExit(f"error: {name}: {named.count(False)} of {len(rows)} rows name no run files")
    if getattr(options, "update_docs", False) and rows and not all(named):
        raise SystemExit(f"error: {name}: --update-docs needs every row's run files (row['runs']) for its provenance")
    if rows and all(named):
        stamps = {}
        rows = [{**row, **provenance(row["runs"], stamps)} for row in rows]
        columns = list(columns) + [c for c in PROVENANCE if c not in columns]
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / (name + ("-quick" if options.quick else "") + ".csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for row in rows:
            w.writerow([fmt(row[c]) for c in columns])
    print(f"[{name}] wrote {path} ({len(rows)} rows)")
    return path


# Two kinds of verdict lines. A criterion is a claim about the theory that
# the data could refute; a sanity check is an identity or a check of the
# design, which must hold for the criteria to mean anything (a failing one
# is a bug or a broken design, not a finding). The sections' tables count
# them apart.
KINDS = ("criterion", "sanity")


def verdict(kind, text, holds, numbers):
    """Prints and returns the one line that states a verdict:
    `KIND: TEXT: holds|fails (NUMBERS)`."""
    if kind not in KINDS:
        raise ValueError(f"a verdict's kind is one of {KINDS}, not {kind!r}")
    line = f"{kind}: {text}: {'holds' if holds else 'fails'} ({numbers})"
    print(line, flush=True)
    return line


def criterion(text, holds, numbers):
    """A claim about the theory: `criterion: TEXT: holds|fails (NUMBERS)`."""
    return verdict("criterion", text, holds, numbers)


def sanity(text, holds, numbers):
    """A check of the design or an identity: `sanity: TEXT: holds|fails (NUMBERS)`."""
    return verdict("sanity", text, holds, numbers)


def write_criteria(name, options, lines):
    """Writes the verdict lines (and plan: lines) to <out>/<name>-criteria.txt
    (--quick: <name>-quick-criteria.txt), one a line, after the commit of the
    driver under --update-docs (preregistration.py)."""
    head = _still_committed(options)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / (name + ("-quick" if options.quick else "") + "-criteria.txt")
    path.write_text("".join(line + "\n" for line in head + list(lines)))
    for line in lines:
        if line.startswith("plan:"):  # the verdicts were printed as they were judged
            print(line, flush=True)
    kinds = [kind for kind, *_ in parse_verdicts("\n".join(lines))]
    print(f"[{name}] wrote {path} ({kinds.count('criterion')} criteria, {kinds.count('sanity')} sanity checks)")
    return path


def parse_verdicts(text):
    """[(kind, text, "holds" or "fails", numbers)] for every line of `text`
    that verdict() wrote (the one reader: preregistration's)."""
    return preregistration.parse_verdicts(text)


def parse_criteria(text):
    """[(text, "holds" or "fails", numbers)] for every criterion line of
    `text` (not the sanity checks)."""
    return [tuple(rest) for kind, *rest in parse_verdicts(text) if kind == "criterion"]


def figure_path(name, options):
    folder = Path(options.figures)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / (f"exp_{name}" + ("-quick" if options.quick else "") + ".png")


def local_only(options, name, commands="`mft ntk`"):
    """Refuses --slurm and --from-sweep for a driver whose runs include
    commands the sweep array does not run (it runs `mft train` only)."""
    if options.slurm or options.from_sweep:
        raise SystemExit(f"error: {name} runs {commands}, which the sweep array does not: run it locally")


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, name, options):
    path = figure_path(name, options)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    print(f"[{name}] wrote {path}")
    return path


def finish_axes(axes, legend_size=7):
    """A grid and a legend on every panel."""
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=legend_size)


def interval_bar(ax, x, iv, exp=False, **style):
    """An interval (stats: value, low, high) as a point with error bars, on
    the exponential scale when `exp` (an interval of logs); none when iv is
    None."""
    if iv is not None:
        v, lo, hi = np.exp([iv.value, iv.low, iv.high]) if exp else (iv.value, iv.low, iv.high)
        ax.errorbar(x, v, yerr=[[v - lo], [hi - v]], capsize=3, **style)

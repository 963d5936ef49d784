"""Runs a sweep table on this machine, without Slurm: each row of TABLE (the
CSV of configuration keys that scripts/slurm/submit_sweep.sh submits as an
array job) becomes `mft train [--config BASE] ROW OPTIONS --output.file
runs/sweep-NAME-ROW.h5 --resume`, J runs at a time on R ranks each; then the
runs are collected into runs/sweep-NAME.csv and runs/sweep-NAME.png and
those that did not finish reported (exit 1 if there was one). Rerunning
continues unfinished runs (--resume) and starts no mft for a finished one
(its file at its train.steps, as `mft train --dry-run --resume` says).

Before the first run it checks, each refusal one line with exit status 2:
the table and the mft program (as `mft-sweep check`: every header key is
mft's and mft's dry run accepts every row) and the Python that collects
($MFT_PYTHON, else the one scripts/env.sh chooses, else this one) for numpy,
h5py, pandas and matplotlib.

  mft-sweep run TABLE [--jobs J] [--ranks R] [--name NAME] [--mft PROGRAM] [--runs FOLDER]
                      [--base INI] [--args OPTIONS] [-- OPTIONS]
"""
import argparse
import concurrent.futures
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from . import sweep_check, sweep_table
from .tool_python import env_script, environment


def command(args, row, output, log):
    """The shell command of one row: env.sh (when there is one), then mpirun."""
    launch = [os.environ.get("MPIEXEC", "mpirun"), "-q", "-n", str(args.ranks)]
    if args.ranks * args.jobs > (os.cpu_count() or 1):
        launch.append("--oversubscribe")
    program = shlex.quote(args.mft)
    words = " ".join(shlex.quote(w) for w in launch)
    rest = " ".join(shlex.quote(w) for w in ["train", *row, "--output.file", str(output), "--resume"])
    script = env_script()
    source = f"source {shlex.quote(str(script))} && " if script else ""
    # Several rows at once: Open MPI binds every job's rank 0 to core 0, so
    # they would share one core while the others idled. Bind nothing,
    # unless the binding is set.
    unbound = ("OMPI_MCA_hwloc_base_binding_policy=${OMPI_MCA_hwloc_base_binding_policy:-none} "
               if args.jobs > 1 else "")
    return f"{source}{unbound}exec {words} {program} {rest} >>{shlex.quote(str(log))} 2>&1"


def _refused(text):
    """Exit status 2 and one line on stderr."""
    print(f"error: {text}", file=sys.stderr)
    return 2


def bad_name(name):
    """Why `name` cannot name the runs (runs/sweep-NAME-ROW.h5), or None:
    empty, a path separator or '..' (a file outside the runs folder), a
    control character."""
    if not name:
        return "is empty"
    if any(sep in name for sep in {"/", os.sep, os.altsep} - {None}) or ".." in name:
        return "holds a path separator or '..'"
    if sweep_table._control(name) is not None:
        return "holds a control character"
    return None


def main(argv=None):
    argv, after = sweep_table.split_options(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="mft-sweep run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table", help="the sweep table (CSV; mft-sweep --help)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    parser.add_argument("--ranks", type=int, default=min(2, os.cpu_count() or 1),
                        help="MPI ranks per run (default 2, or 1 on one core)")
    parser.add_argument("--name", default="local", help="runs/sweep-NAME-ROW.h5 (default: local)")
    parser.add_argument("--runs", default="runs", help="folder of the run files and results (default runs)")
    parser.add_argument("--mft", help="the mft program (default: $MFT, else this checkout's or installation's)")
    sweep_table.shared_arguments(parser)
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.ranks < 1:
        parser.error("--jobs and --ranks must be positive")
    why = bad_name(args.name)
    if why:
        return _refused(f"--name {args.name!r} {why}: it names the files runs/sweep-NAME-ROW.h5")
    try:
        extra = sweep_table.extra_words(args, after)
        rows = sweep_table.all_args(args.table, args.base, extra)
    except sweep_table.SweepTableError as e:
        return _refused(e)
    folder = Path(args.runs)
    if os.path.lexists(folder) and not folder.is_dir():
        return _refused(f"--runs {args.runs}: not a folder (it holds the run files)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return _refused(f"--runs {args.runs}: cannot make the folder ({e.strerror or e})")
    program, python = environment()
    args.mft = args.mft or shutil.which(program or "mft") or program
    python = os.environ.get("MFT_PYTHON") or python or sys.executable
    why = sweep_check.check_python(python)
    if why:
        return _refused(f"{why} (nothing was run)")
    if not args.mft:
        return _refused("no mft program: give --mft PROGRAM, set MFT, or build this checkout (nothing was run)")
    try:
        sweep_check.check_rows(args.table, args.mft, args.base, extra, jobs=args.jobs)
    except sweep_table.SweepTableError as e:
        return _refused(f"{e} (nothing was run)")
    outputs = [folder / f"sweep-{args.name}-{task}.h5" for task in range(len(rows))]

    def run(task):
        # A finished row stays as it is, and mft is not started for it.
        done_at = sweep_check.finished_step(args.mft, rows[task], str(outputs[task]))
        if done_at is not None:
            print(f"[sweep {args.name}] row {task}: finished already ({outputs[task]} is at step {done_at}, "
                  f"its train.steps): not run", flush=True)
            return 0
        log = outputs[task].with_suffix(".log")
        done = subprocess.run(["bash", "-c", command(args, rows[task], outputs[task], log)])
        print(f"[sweep {args.name}] row {task}: exit {done.returncode} ({log})", flush=True)
        return done.returncode

    print(f"[sweep {args.name}] {len(rows)} runs of {args.table}, {args.jobs} at a time on {args.ranks} ranks each",
          flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(run, range(len(rows))))
    package = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=package + (os.pathsep + os.environ["PYTHONPATH"]
                                                 if os.environ.get("PYTHONPATH") else ""))
    collect = [python, "-m", "mft.sweep", "collect", *map(str, outputs), "--table", args.table, "--report-failed",
               "--csv", str(folder / f"sweep-{args.name}.csv"), "--plot", str(folder / f"sweep-{args.name}.png")]
    return subprocess.run(collect, env=env, stdin=subprocess.DEVNULL).returncode

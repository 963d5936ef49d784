"""Runs a sweep table on this machine, without Slurm: each row of TABLE (the
CSV of configuration keys that scripts/slurm/submit_sweep.sh submits as an
array job) becomes `mft train ... --output.file runs/sweep-NAME-ROW.h5
--resume`, J runs at a time on R ranks each; then the finished runs are
collected into runs/sweep-NAME.csv and runs/sweep-NAME.png and the others
reported (exit 1 if there was one). Rerunning continues unfinished runs and
leaves finished ones as they are (--resume).

  python3 -m mft.sweep run TABLE [--jobs J] [--ranks R] [--name NAME] [--mft PROGRAM] [--runs FOLDER]
"""
import argparse
import concurrent.futures
import os
import shlex
import subprocess
import sys
from pathlib import Path

from . import sweep


def env_script():
    """env.sh of this checkout (scripts/env.sh) or installation
    (PREFIX/share/mft/env.sh), or None (a pip installation)."""
    package = Path(__file__).resolve().parent
    candidates = [package.parent / "env.sh"]
    if len(package.parents) > 3:  # PREFIX/lib/python3/dist-packages/mft
        candidates.append(package.parents[3] / "share" / "mft" / "env.sh")
    return next((c for c in candidates if c.is_file()), None)


def command(args, row, output, log):
    """The shell command of one row: env.sh (when there is one), then mpirun."""
    launch = [os.environ.get("MPIEXEC", "mpirun"), "-q", "-n", str(args.ranks)]
    if args.ranks * args.jobs > (os.cpu_count() or 1):
        launch.append("--oversubscribe")
    program = shlex.quote(args.mft) if args.mft else '"${MFT:-${MFT_PROGRAM:-mft}}"'
    words = " ".join(shlex.quote(w) for w in launch)
    rest = " ".join(shlex.quote(w) for w in ["train", *row, "--output.file", str(output), "--resume"])
    script = env_script()
    source = f"source {shlex.quote(str(script))} && " if script else ""
    return f"{source}exec {words} {program} {rest} >>{shlex.quote(str(log))} 2>&1"


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
    if sweep._control(name) is not None:
        return "holds a control character"
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m mft.sweep run", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table", help="the sweep table (CSV; python3 -m mft.sweep --help)")
    parser.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    parser.add_argument("--ranks", type=int, default=min(2, os.cpu_count() or 1),
                        help="MPI ranks per run (default 2, or 1 on one core)")
    parser.add_argument("--name", default="local", help="runs/sweep-NAME-ROW.h5 (default: local)")
    parser.add_argument("--runs", default="runs", help="folder of the run files and results (default runs)")
    parser.add_argument("--mft", help="the mft program (default: this checkout's or installation's, or $MFT)")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.ranks < 1:
        parser.error("--jobs and --ranks must be positive")
    why = bad_name(args.name)
    if why:
        return _refused(f"--name {args.name!r} {why}: it names the files runs/sweep-NAME-ROW.h5")
    try:
        rows = [sweep.sweep_args(args.table, task) for task in range(len(sweep.sweep_rows(args.table)))]
    except sweep.SweepTableError as e:
        return _refused(e)
    folder = Path(args.runs)
    if os.path.lexists(folder) and not folder.is_dir():
        return _refused(f"--runs {args.runs}: not a folder (it holds the run files)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return _refused(f"--runs {args.runs}: cannot make the folder ({e.strerror or e})")
    outputs = [folder / f"sweep-{args.name}-{task}.h5" for task in range(len(rows))]

    def run(task):
        log = outputs[task].with_suffix(".log")
        done = subprocess.run(["bash", "-c", command(args, rows[task], outputs[task], log)])
        print(f"[sweep {args.name}] row {task}: exit {done.returncode} ({log})", flush=True)
        return done.returncode

    print(f"[sweep {args.name}] {len(rows)} runs of {args.table}, {args.jobs} at a time on {args.ranks} ranks each",
          flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(run, range(len(rows))))
    return sweep.main([str(p) for p in outputs] + ["--report-failed", "--csv", str(folder / f"sweep-{args.name}.csv"),
                                                   "--plot", str(folder / f"sweep-{args.name}.png")])

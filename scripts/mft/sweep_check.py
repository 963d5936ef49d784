"""The check of a sweep before anything of it runs or is queued: the table
reads, its header keys are mft's, and mft itself accepts every row's values
(`mft train --dry-run` with the row's options, the base configuration and
the shared options: one process a row, on one rank without an MPI
launcher); and the Python that will collect the runs has what collecting
needs. The first row mft refuses is named in one line with mft's own
message. Once all pass, it prints each row as it will run ("row 0 (line
3): model.heads = 4, init.sigma_qk = default"), the options every row
shares, and last "rows: N".

  mft-sweep check TABLE --mft PROGRAM [--base INI] [--args OPTIONS] [--jobs J] [-- OPTIONS]
"""
import argparse
import concurrent.futures
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

from . import sweep_table

# What collecting a sweep imports (mft.sweep collect, with its figure).
COLLECT_MODULES = ("numpy", "h5py", "pandas", "matplotlib")
# The oldest Python the package supports (scripts/pyproject.toml).
OLDEST = (3, 9)
# A memory limit that no estimate reaches: the dry run checks the values,
# while the memory a run may use depends on the node and the rank count it
# gets, which the run itself checks when it starts.
NO_MEMORY_LIMIT = "1000000T"


def missing_modules(names, python=None):
    """The modules of `names` that `python` (default: this interpreter)
    cannot import, found without importing them; for another interpreter
    also a too old one or one that does not run ('python 3.6', 'python')."""
    if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
        return [n for n in names if importlib.util.find_spec(n) is None]
    code = ("import importlib.util, sys\n"
            f"if sys.version_info < {OLDEST!r}: print('python %d.%d' % sys.version_info[:2]); sys.exit()\n"
            "print(' '.join(n for n in sys.argv[1:] if importlib.util.find_spec(n) is None))")
    try:
        done = subprocess.run([python, "-c", code, *names], capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ["python"]
    if done.returncode != 0:
        return ["python"]
    return done.stdout.split()


def lacks(python, missing):
    """One line saying what `python` lacks and what to do."""
    if missing == ["python"]:
        return f"{python} does not run as a Python 3 interpreter; set MFT_PYTHON to one with " \
               f"{', '.join(COLLECT_MODULES)}"
    if missing and missing[0].startswith("python "):
        return f"{python} is {missing[0]}; the mft package needs Python {OLDEST[0]}.{OLDEST[1]} or later " \
               "(set MFT_PYTHON to one)"
    return (f"{python} cannot import {', '.join(missing)}, which collecting a sweep needs: install "
            f"{'them' if len(missing) > 1 else 'it'} (scripts/install-deps.sh) or set MFT_PYTHON to a "
            "python3 that has them")


def collecting_python():
    """The Python that collects: $MFT_PYTHON when set, else this one."""
    return os.environ.get("MFT_PYTHON") or sys.executable


def check_python(python=None):
    """None when `python` (default collecting_python()) can collect a
    sweep, else one line saying why not."""
    python = python or collecting_python()
    if (python is None or os.path.realpath(python) == os.path.realpath(sys.executable)) \
            and sys.version_info < OLDEST:
        return lacks(sys.executable, [f"python {sys.version_info[0]}.{sys.version_info[1]}"])
    missing = missing_modules(COLLECT_MODULES, python)
    return lacks(python, missing) if missing else None


def program_env():
    """The environment of mft's dry runs: one BLAS thread, and as root
    the permission Open MPI asks for (as scripts/env.sh gives it)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def _train_dry_run(program, args, output, *more, timeout=300):
    """`program train --dry-run ARGS --output.file OUTPUT MORE` (without a
    memory limit unless ARGS set one): the finished process, or why it
    could not run (a string)."""
    command = [program, "train", "--dry-run", *args, "--output.file", output, *more]
    if not any(a == "--run.max_memory" for a in args):
        command += ["--run.max_memory", NO_MEMORY_LIMIT]
    try:
        return subprocess.run(command, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL,
                              env=program_env())
    except OSError as e:
        return f"{program}: cannot run it ({e.strerror or e})"
    except subprocess.TimeoutExpired:
        return f"{program} train --dry-run: no answer in {timeout} s"


def dry_run(program, args, output, timeout=300):
    """None when `program train --dry-run ARGS` accepts the options, else
    mft's message (its last line of error output)."""
    done = _train_dry_run(program, args, output, timeout=timeout)
    if isinstance(done, str):
        return done
    if done.returncode == 0:
        return None
    said = [line.strip() for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
    errors = [line for line in said if line.startswith("mft: error:")]
    return (errors or said or [f"mft train --dry-run failed with exit status {done.returncode}"])[-1]


def finished_step(program, args, output, timeout=300):
    """The step of `output` when its run is finished for these row options
    (`program train --dry-run ARGS --output.file OUTPUT --resume` would
    continue it from that step and train.steps is that step), else None: no
    file, a run stopped early to continue, or a file mft would refuse (the
    row's own run says why)."""
    if not os.path.isfile(output):
        return None
    done = _train_dry_run(program, args, output, "--resume", timeout=timeout)
    if isinstance(done, str):
        return None
    text = done.stdout.decode(errors="replace")
    at = re.search(r"^# restart from .*: step (\d+), tau", text, re.M)
    section = re.search(r"^\[train\]\n((?:[^\[].*\n)*)", text, re.M)
    steps = section and re.search(r"^steps = (\d+)$", section.group(1), re.M)
    if done.returncode != 0 or not at or not steps or at.group(1) != steps.group(1):
        return None
    return int(at.group(1))


def check_rows(table, program, base=None, extra=(), jobs=None):
    """The number of rows of `table` once every check passed: the table
    reads, its header keys are PROGRAM's (`--keys`), and PROGRAM's dry run
    accepts every row with the base and the shared options. Raises
    SweepTableError naming the table, the first row refused (and its line)
    and mft's message."""
    sweep_table.sweep_rows(table)  # a table that cannot be read is refused before mft runs
    sweep_table.check_table(table, sweep_table.keys_of_program(program))
    rows = sweep_table.all_args(table, base, extra)
    lines = sweep_table._parse(table)[3]["row lines"]
    jobs = jobs or min(4, os.cpu_count() or 1)
    with tempfile.TemporaryDirectory(prefix="mft-sweep-check-") as folder:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(dry_run, program, args, os.path.join(folder, f"row-{task}.h5"))
                       for task, args in enumerate(rows)]
            try:
                for task, future in enumerate(futures):
                    why = future.result()
                    if why:
                        raise sweep_table.SweepTableError(f"{table}: row {task} (line {lines[task]}): {why}")
            finally:
                for future in futures:
                    future.cancel()
    return len(rows)


def main(argv=None):
    argv, after = sweep_table.split_options(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="mft-sweep check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("table", help="the sweep table (CSV; mft-sweep --help)")
    parser.add_argument("--mft", metavar="PROGRAM",
                        help="the mft program the runs will use (default: as scripts/env.sh finds it, $MFT or "
                             "the checkout's or installation's build)")
    parser.add_argument("--jobs", type=int, help="dry runs at once (default: up to 4, one a core)")
    parser.add_argument("--no-python-check", action="store_true",
                        help="leave out the check of the Python that collects ($MFT_PYTHON, else this one)")
    sweep_table.shared_arguments(parser)
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be positive")
    why = None if args.no_python_check else check_python()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    if args.mft is None:
        from .tool_python import environment
        args.mft = environment()[0]
        if not args.mft or not os.access(args.mft, os.X_OK):
            print(f"error: no mft program{' at ' + args.mft if args.mft else ''}: build it (scripts/test.sh) "
                  "or give --mft PROGRAM", file=sys.stderr)
            return 2
    extra = sweep_table.extra_words(args, after)
    try:
        rows = check_rows(args.table, args.mft, args.base, extra, args.jobs)
    except sweep_table.SweepTableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for line in sweep_table.expanded_rows(args.table, args.base, extra):
        print(line)
    print(f"rows: {rows}")
    return 0

"""The sweep commands, `mft-sweep grid | count | args | check | freeze |
collect | run` (`python3 -m mft.sweep`, scripts/mft-sweep), on top of their
parts: the table model (sweep_table) at the bottom, the row checks
(sweep_check), grids (sweep_grid), the local runner (sweep_run), the
collection (sweep_collect) and its figure (sweep_plot) above it. The parts
import downwards only; this module imports them all and none imports it.
Its names are the package's interface to sweeps: the table's and the
collection's are importable from here.
"""
import argparse
import os
import sys

from . import sweep_check, sweep_grid, sweep_plot, sweep_run
from .h5checks import cannot_write, one_line
from .sweep_collect import COLUMNS, collect, print_table, why_failed, write_csv
from .sweep_plot import plot
from .sweep_table import (CELL_LIMIT, ROW_LIMIT, SweepTableError, all_args, check_table, keys_from,
                          shared_options, sweep_args, sweep_rows, table_settings)
from . import sweep_collect
from .usage import usage_text

# The package's names for sweeps: the table's and the collection's.
__all__ = ["CELL_LIMIT", "COLUMNS", "ROW_LIMIT", "SweepTableError", "all_args", "check_table", "collect", "keys_from",
           "main", "plot", "print_table", "shared_options", "sweep_args", "sweep_rows", "table_main", "table_settings",
           "why_failed", "write_csv"]

TABLE_USAGE = """Sweep tables: a CSV file whose header names mft configuration keys
(model.heads, readout.weights, ...) and whose rows are runs; lines whose first
non-blank character is '#' and blank lines are skipped, spaces around keys and
values are dropped, and a value holding commas is quoted ("0.5,0.25"). The
table is UTF-8 (a leading byte-order mark, as spreadsheets write, is dropped)
and a regular file (a FIFO, a device or a folder is refused before it is
opened). No control character but tab may appear in it (NUL, escape, ...;
CR and LF only end lines): each cell becomes one argument of mft. The table
may not set output.file: each task writes runs/sweep-ARRAYJOB-TASK.h5 itself.
Two comment lines are settings that every row shares:
  #: base = run.ini           passed as --config run.ini to every row (a relative
                              path is relative to the table's folder)
  #: args = --train.steps 50  mft options added to every row (shell words)

  mft-sweep grid KEY=VALUES ... [--base INI] [--args OPTIONS] [-o TABLE] [-- OPTIONS]
                                          writes the table of every combination of the
                                          values (the last key varies fastest): VALUES is
                                          a comma-separated list (CSV quoting for a value
                                          holding commas) of values and inclusive integer
                                          ranges A:B or A:B:STEP (init.seed=1:3 is 1,2,3),
                                          an empty value the key's default; `A zip B`
                                          pairs two keys' values, `+` joins blocks of
                                          rows; to stdout or TABLE (mft-sweep grid --help)
  mft-sweep count TABLE                   prints the number of rows
  mft-sweep args TABLE TASK               prints row TASK (0-based) as mft options: --config
                                          BASE, --key value ..., the shared options; each
                                          followed by a NUL byte; an empty value leaves its
                                          key unset
  mft-sweep check TABLE --mft PROGRAM [--base INI] [--args OPTIONS] [-- OPTIONS]
                                          checks the table, that every header key is one
                                          of PROGRAM --keys, then every row's values by
                                          `PROGRAM train --dry-run` (one process a row, no
                                          MPI launcher), and that this Python can collect
                                          the runs; prints each row as it will run (an
                                          empty cell: the key's default), the options
                                          every row shares and last "rows: N"
                                          (scripts/slurm/submit_sweep.sh runs it before it
                                          submits)
  mft-sweep check TABLE --keys-from FILE  the keys only, against a list one a line in FILE
                                          ('-': stdin), as `mft --keys` prints it
  mft-sweep freeze TABLE -o OUT [--base INI] [--args OPTIONS] [-- OPTIONS]
                                          writes TABLE with the settings given here added
                                          (submit_sweep.sh submits such a copy)
  mft-sweep collect RUN.h5 ...            the same as scripts/collect_sweep.py
  mft-sweep run TABLE [--jobs J] [--ranks R] [--name NAME] [--base INI] [--args OPTIONS]
                                          checks, then runs the table here, without Slurm:
                                          J runs at a time into runs/sweep-NAME-ROW.h5, then
                                          collects them (mft-sweep run --help)

mft-sweep is `python3 -m mft.sweep` (PYTHONPATH=scripts in a checkout, or
scripts/mft-sweep there). Exit status 2, with one line naming the table and
the row or line, for a table that cannot be read, a row with another number
of fields than the header, an empty, repeated or (check) unknown key, an
unbalanced quote, a control character (with its column), a cell of more than
64 KiB (with its column), an unknown or repeated setting, or a row TASK that
the table lacks; check also for a key list that cannot be read and for the
first row that mft refuses (with mft's own message).
"""


def main(argv=None):
    """`mft-sweep collect` and scripts/collect_sweep.py (--help)."""
    parser = argparse.ArgumentParser(description=usage_text(sweep_collect.__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="mft train run files")
    parser.add_argument("--table", help="the sweep table of the runs (one file per row, in its order): "
                                        "its header keys are the swept keys")
    parser.add_argument("--csv", help="CSV file to write")
    parser.add_argument("--plot", help="PNG file to write")
    parser.add_argument("--report-failed", action="store_true",
                        help="a sweep's files: print one line per run that did not finish (missing, damaged, "
                             "stopped early), keep it in the table as failed or stopped, and exit 1 if there "
                             "was one")
    parser.add_argument("--rate-window", default="0.5:1", metavar="A:B",
                        help="the column rate: minus the least-squares slope of log R against tau over the history "
                             "rows with tau in [A, B] times the run's last tau (default 0.5:1, the last half)")
    parser.add_argument("--eps", type=float, metavar="E",
                        help="the column tau_eps: the first tau at which R reaches E (linear in log R between rows; "
                             "blank when no row does)")
    parser.add_argument("--x", metavar="KEY", help="the figure's horizontal axis (default: a panel per varied key)")
    parser.add_argument("--hue", metavar="KEY", help="the figure's curves: one per value of KEY (any other varied "
                                                     "key that is not --x or --facet splits them further)")
    parser.add_argument("--facet", metavar="KEY", help="the figure: a panel per value of KEY")
    parser.add_argument("--y", metavar="COLUMN", action="append",
                        help="a measure the figure draws, a row of panels each (repeatable; default R and "
                             "test_risk): any numeric column, e.g. rate, tau_eps, test_ratio, ntk_lambda_min")
    args = parser.parse_args(argv)
    try:
        low, high = (float(v) for v in args.rate_window.split(":"))
        if not 0 <= low < high <= 1:
            raise ValueError
    except ValueError:
        print(f"error: --rate-window {args.rate_window}: not A:B with 0 <= A < B <= 1 (fractions of the run's tau)",
              file=sys.stderr)
        return 2
    args.window = (low, high)
    if args.eps is not None and not args.eps > 0:
        print(f"error: --eps {args.eps:g}: not a positive risk", file=sys.stderr)
        return 2
    inputs = args.runs + ([args.table] if args.table else [])
    if args.csv and args.plot and os.path.abspath(args.csv) == os.path.abspath(args.plot):
        print(f"error: --csv and --plot name one file, {args.csv}", file=sys.stderr)
        return 2
    for path, what in ((args.csv, "--csv"), (args.plot, "--plot")):
        why = path and cannot_write(path, inputs)
        if why:
            print(f"error: {what} {path}: {why}", file=sys.stderr)
            return 2
    missing = sweep_check.missing_modules(["numpy", "h5py", "pandas"] + (["matplotlib"] if args.plot else []))
    if missing:
        print(f"error: {sweep_check.lacks(sys.executable, missing)}", file=sys.stderr)
        return 2

    from . import io as mft_io
    # the tools' one error boundary, once the modules it needs are known to be here
    # (it names the files of the command line: the argument list is passed)
    words = sys.argv[1:] if argv is None else list(argv)
    return mft_io.exit_on_run_file_error(lambda _words: _collect_main(args))(words)


def _collect_main(args):
    from . import io as mft_io

    failed = []
    if args.report_failed:
        failed = [(path, why) for path in args.runs for why in [why_failed(path)] if why]
        for path, why in failed:
            print(f"failed: {path}: {why}")
        print(f"{len(args.runs) - len(failed)} of {len(args.runs)} runs finished")
        if len(failed) == len(args.runs):
            return 1
    try:
        frame = collect(args.runs, table=args.table, report_failed=args.report_failed, window=args.window,
                        eps=args.eps)
        sweep_plot.check_axes(frame, args.x, args.hue, args.facet, args.y)
    except (mft_io.RunFileError, SweepTableError, ValueError) as e:
        sys.exit(f"error: {e}")
    print_table(frame)

    def figure(frame, path):
        return plot(frame, path, args.x, args.hue, args.facet, args.y)
    for path, what, write in ((args.csv, "--csv", write_csv), (args.plot, "--plot", figure)):
        if not path:
            continue
        try:
            write(frame, path)
        except (OSError, ValueError) as e:  # ValueError: a plot format matplotlib does not know
            print(f"error: {what} {path}: cannot write it ({one_line(getattr(e, 'strerror', None) or e)})",
                  file=sys.stderr)
            return 2
        print(f"wrote {path}")
    return 1 if failed else 0


def table_main(argv=None):
    """`mft-sweep grid | count | args | check | freeze | collect | run` (--help)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = argv[0] if argv else None
    if command == "collect":
        return main(argv[1:])
    if command == "run":
        return sweep_run.main(argv[1:])
    if command in ("grid", "freeze"):
        return sweep_grid.main(argv)
    if command == "check" and "--keys-from" not in argv:
        return sweep_check.main(argv[1:])
    if command in ("-h", "--help"):
        print(TABLE_USAGE, end="")
        return 0
    shapes = {"count": 1, "args": 2, "check": 3}
    if (command not in shapes or len(argv) != 1 + shapes[command]
            or (command == "check" and argv[2] != "--keys-from")):
        print("usage: mft-sweep {grid KEY=VALUES ... | count TABLE | args TABLE TASK | check TABLE "
              "(--mft PROGRAM | --keys-from FILE) | freeze TABLE -o OUT | collect RUN.h5 ... | run TABLE ...} "
              "(--help)", file=sys.stderr)
        return 2
    try:
        if command == "count":
            print(len(sweep_rows(argv[1])))
        elif command == "check":
            sweep_rows(argv[1])  # a table that cannot be read is refused before the key list is read
            print(len(check_table(argv[1], keys_from(argv[3]))))
        else:
            try:
                task = int(argv[2])
            except ValueError:
                raise SweepTableError(f"{argv[1]}: row {argv[2]!r} is not a row number") from None
            args = sweep_args(argv[1], task)
            sys.stdout.buffer.write(b"".join(a.encode() + b"\0" for a in args))
            sys.stdout.flush()
    except SweepTableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(table_main())

"""Collects the runs of a sweep: the final risk R, objective Q and step count
of every run into a table (stdout and CSV), and plots the final R against the
width M at fixed depth L and against L at fixed M (the shape of [A]'s
experiments: small models stall, wide or deep ones reach R ~ 0).

  /usr/bin/python3 scripts/collect_sweep.py RUN.h5 [RUN.h5 ...] [--csv sweep.csv] [--plot sweep.png]
"""
import argparse
import collections
import csv
import os
import sys

from . import io as mft_io

# The columns of the collected table, in this order.
COLUMNS = ["file", "M", "L", "steps", "tau", "R0", "R", "Q"]

TABLE_USAGE = """Reads a sweep table: a CSV file whose header names mft configuration keys
(model.heads, readout.weights, ...) and whose rows are runs; lines whose first
non-blank character is '#' and blank lines are skipped, spaces around keys and
values are dropped, and a value holding commas is quoted ("0.5,0.25").

  python3 -m mft.sweep count TABLE        prints the number of rows
  python3 -m mft.sweep args TABLE TASK    prints row TASK (0-based) as mft options,
                                          --key value ..., each followed by a NUL byte;
                                          an empty value leaves its key unset
  python3 -m mft.sweep collect RUN.h5 ... the same as scripts/collect_sweep.py

Exit status 2, with one line naming the table and the row, for a table that
cannot be read, a row with another number of fields than the header, an empty
or repeated key, an unbalanced quote, or a row TASK that the table lacks.
"""


class SweepTableError(Exception):
    """A sweep table that cannot be read, or a row that it lacks."""


def _run_row(path):
    run = mft_io.Run(path)
    try:
        hist = run.history
        if hist is None or len(hist["step"]) == 0:
            raise mft_io.RunFileError(f"{path}: no /history (not a training run)")
        cfg = run.config
        return {"file": os.path.basename(path), "M": int(cfg["model.heads"]), "L": int(cfg["model.slices"]),
                "steps": int(hist["step"][-1]), "tau": float(hist["tau"][-1]),
                "R0": float(hist["risk"][0]), "R": float(hist["risk"][-1]), "Q": float(hist["objective"][-1])}
    finally:
        run.close()


def collect(paths):
    """The final values of each training run in `paths` as a pandas.DataFrame
    with COLUMNS (file: the basename; M, L; steps, tau, R and Q of the last
    history row; R0 the initial risk), sorted by L, M and file. Raises
    mft.io.RunFileError for a file that is not an mft/1 training run."""
    import pandas as pd

    frame = pd.DataFrame([_run_row(path) for path in paths], columns=COLUMNS)
    return frame.sort_values(["L", "M", "file"], kind="stable").reset_index(drop=True)


def print_table(frame, out=None):
    out = out or sys.stdout
    print(f"{'file':<28} {'M':>6} {'L':>5} {'steps':>7} {'tau':>9} {'R initial':>12} {'R final':>12} {'Q final':>12}",
          file=out)
    for r in frame.to_dict("records"):
        print(f"{r['file']:<28} {r['M']:>6} {r['L']:>5} {r['steps']:>7} {r['tau']:>9.4g} {r['R0']:>12.5e}"
              f" {r['R']:>12.5e} {r['Q']:>12.5e}", file=out)


def write_csv(frame, path):
    """The table as CSV, plain "\\n" line ends, floats to the last digit."""
    frame.to_csv(path, columns=COLUMNS, index=False, lineterminator="\n")


def plot(frame, path):
    """Final R against M at fixed L (left) and against L at fixed M (right)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    by_L, by_M = collections.defaultdict(list), collections.defaultdict(list)
    for r in frame.to_dict("records"):
        by_L[r["L"]].append((r["M"], r["R"]))
        by_M[r["M"]].append((r["L"], r["R"]))
    for L, pts in sorted(by_L.items()):
        pts.sort()
        a.loglog(*zip(*pts), "o-", label=f"L = {L}")
    for M, pts in sorted(by_M.items()):
        pts.sort()
        b.loglog(*zip(*pts), "s-", label=f"M = {M}")
    a.set_xlabel("heads per slice M")
    b.set_xlabel("depth slices L")
    for ax in (a, b):
        ax.set_ylabel("final risk R")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    a.set_title("final R against width at fixed depth", fontsize=9)
    b.set_title("final R against depth at fixed width", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="mft train run files")
    parser.add_argument("--csv", help="CSV file to write")
    parser.add_argument("--plot", help="PNG file to write")
    args = parser.parse_args(argv)

    try:
        frame = collect(args.runs)
    except mft_io.RunFileError as e:
        sys.exit(f"error: {e}")
    print_table(frame)
    if args.csv:
        write_csv(frame, args.csv)
        print(f"wrote {args.csv}")
    if args.plot:
        plot(frame, args.plot)
        print(f"wrote {args.plot}")


# Sweep tables: the runs of a Slurm sweep (scripts/slurm/sweep.sbatch).

def sweep_rows(table):
    """The runs of the sweep table `table` (a CSV file path) in table order,
    each {configuration key: value} with the keys of the header, values as
    strings ('' for an empty field). Lines whose first non-blank character
    is '#' and blank lines are skipped; spaces around keys and values are
    dropped; a quoted field may hold commas ("0.5,0.25") and doubled quotes,
    not line breaks. Raises SweepTableError naming the table and the row."""
    try:
        with open(table, newline="") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise SweepTableError(f"{table}: cannot read it ({getattr(e, 'strerror', None) or e})") from None
    lines = [(number, line)
             for number, line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1)
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise SweepTableError(f"{table}: no header (every line is blank or a comment)")

    def fields(number, line, what):
        if line.count('"') % 2:
            raise SweepTableError(f"{table}: {what} (line {number}) has an unbalanced quote")
        return [x.strip() for x in next(csv.reader([line], skipinitialspace=True))]

    number, line = lines[0]
    keys = fields(number, line, "the header")
    for i, key in enumerate(keys):
        if not key:
            raise SweepTableError(f"{table}: the header (line {number}) has an empty key in column {i + 1}")
        if keys.index(key) != i:
            raise SweepTableError(f"{table}: the header (line {number}) names {key} twice")
    rows = []
    for task, (number, line) in enumerate(lines[1:]):
        values = fields(number, line, f"row {task}")
        if len(values) != len(keys):
            raise SweepTableError(f"{table}: row {task} (line {number}) has {len(values)} fields, "
                                  f"the header {len(keys)}")
        rows.append(dict(zip(keys, values)))
    return rows


def sweep_args(table, task):
    """Row `task` (0-based) of the sweep table as mft options: ['--key',
    'value', ...] in header order; a key whose value is empty in this row is
    left out (mft takes its default or the config file's value)."""
    rows = sweep_rows(table)
    if not 0 <= task < len(rows):
        raise SweepTableError(f"{table}: no row {task} (its rows are 0 to {len(rows) - 1})"
                              if rows else f"{table}: no row {task} (the table has a header and no rows)")
    args = []
    for key, value in rows[task].items():
        if value != "":
            args += [f"--{key}", value]
    return args


def table_main(argv=None):
    """`python3 -m mft.sweep count TABLE | args TABLE TASK | collect RUN.h5 ...`"""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = argv[0] if argv else None
    if command == "collect":
        return main(argv[1:])
    if command in ("-h", "--help"):
        print(TABLE_USAGE, end="")
        return 0
    shapes = {"count": 1, "args": 2}
    if command not in shapes or len(argv) != 1 + shapes[command]:
        print("usage: python3 -m mft.sweep {count TABLE | args TABLE TASK | collect RUN.h5 ...} (--help)",
              file=sys.stderr)
        return 2
    try:
        if command == "count":
            print(len(sweep_rows(argv[1])))
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

"""Collects the runs of a sweep: the final risk R, objective Q and step count
of every run into a table (stdout and CSV), and plots the final R against the
width M at fixed depth L and against L at fixed M (the shape of [A]'s
experiments: small models stall, wide or deep ones reach R ~ 0).

  python3 scripts/collect_sweep.py RUN.h5 [RUN.h5 ...] [--csv sweep.csv] [--plot sweep.png]
"""
import argparse
import collections
import csv
import difflib
import os
import re
import stat
import subprocess
import sys
import unicodedata

from .h5checks import file_kind, one_line

# The columns of the collected table, in this order.
COLUMNS = ["file", "M", "L", "steps", "tau", "R0", "R", "Q"]

TABLE_USAGE = """Reads a sweep table: a CSV file whose header names mft configuration keys
(model.heads, readout.weights, ...) and whose rows are runs; lines whose first
non-blank character is '#' and blank lines are skipped, spaces around keys and
values are dropped, and a value holding commas is quoted ("0.5,0.25"). The
table is UTF-8 (a leading byte-order mark, as spreadsheets write, is dropped)
and a regular file (a FIFO, a device or a folder is refused before it is
opened). No control character but tab may appear in it (NUL, escape, ...;
CR and LF only end lines): each cell becomes one argument of mft. The table
may not set output.file: each task writes runs/sweep-ARRAYJOB-TASK.h5 itself.

  python3 -m mft.sweep count TABLE        prints the number of rows
  python3 -m mft.sweep args TABLE TASK    prints row TASK (0-based) as mft options,
                                          --key value ..., each followed by a NUL byte;
                                          an empty value leaves its key unset
  python3 -m mft.sweep check TABLE --keys-from FILE
  python3 -m mft.sweep check TABLE --mft PROGRAM
                                          checks every row and that every header key
                                          is an mft configuration key: one a line in
                                          FILE ('-': stdin), the output of `mft --keys`,
                                          or as PROGRAM --keys prints them; then prints
                                          the number of rows (scripts/slurm/submit_sweep.sh
                                          runs it before it submits)
  python3 -m mft.sweep collect RUN.h5 ... the same as scripts/collect_sweep.py
  python3 -m mft.sweep run TABLE [--jobs J] [--ranks R] [--name NAME]
                                          runs the table here, without Slurm: J runs
                                          at a time into runs/sweep-NAME-ROW.h5, then
                                          collects them (python3 -m mft.sweep run --help)

Exit status 2, with one line naming the table and the row or line, for a table
that cannot be read, a row with another number of fields than the header, an
empty, repeated or (check) unknown key, an unbalanced quote, a control
character (with its column), a cell of more than 64 KiB (with its column),
or a row TASK that the table lacks; check also for a key list that cannot be
read.
"""
# Keys a sweep table may not set, and why: the task sets them itself.
TASK_KEYS = {"output.file": "each task writes runs/sweep-ARRAYJOB-TASK.h5 (set by sweep.sbatch; "
                            "mft refuses a key given twice)"}
# The most bytes (UTF-8) a cell of a sweep table may hold: a value of mft's
# configuration is far shorter, and csv refuses a field past its own limit.
CELL_LIMIT = 64 * 1024


class SweepTableError(Exception):
    """A sweep table that cannot be read, a row that it lacks, or a header
    key that is not in the key list it is checked against."""


def _run_row(path):
    from . import io as mft_io

    run = mft_io.Run(path)
    try:
        hist = run.training_history()
        cfg = run.config
        return {"file": os.path.basename(path), "M": int(cfg["model.heads"]), "L": int(cfg["model.slices"]),
                "steps": int(hist["step"][-1]), "tau": float(hist["tau"][-1]),
                "R0": float(hist["risk"][0]), "R": float(hist["risk"][-1]), "Q": float(hist["objective"][-1])}
    finally:
        run.close()


def collect(paths):
    """The final values of each training run in `paths` as a pandas.DataFrame
    with COLUMNS (file: the basename; M, L; steps, tau, R and Q of the last
    complete history row; R0 the initial risk), sorted by L, M and file.
    Raises mft.io.RunFileError for a file that is not an mft/1 training run
    or whose history is damaged."""
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


def cannot_write(path):
    """Why no file can be written at `path`, found by stat before any work:
    it is a folder, a FIFO or a socket (a write to a FIFO waits for a
    reader), or its folder is missing; None when it can be tried (a regular
    file is replaced)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        folder = os.path.dirname(path) or "."
        return None if os.path.isdir(folder) else f"no folder {folder} to write it in"
    except (OSError, ValueError) as e:
        return f"cannot look at it ({getattr(e, 'strerror', None) or e})"
    if stat.S_ISDIR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return f"{file_kind(mode)}, not a regular file"
    return None


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


def why_failed(path):
    """Why the run of a sweep task in `path` did not finish, or None when it
    did: no file (the task ended before its first snapshot), a file that is
    not a complete training run, or one whose history stops before
    train.steps (diverged, failed or out of time)."""
    from . import io as mft_io

    if not os.path.exists(path):
        return "no such file (the task ended before its first snapshot; see its log)"
    try:
        with mft_io.open_run(path) as run:
            last = int(run.training_history()["step"][-1])
            steps = int(run.config.get("train.steps", last))
    except mft_io.RunFileError as e:
        return str(e).replace(f"{path}: ", "", 1)
    if last < steps:
        return f"stopped at step {last} of {steps} (diverged, failed or out of time; see its log)"
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="mft train run files")
    parser.add_argument("--csv", help="CSV file to write")
    parser.add_argument("--plot", help="PNG file to write")
    parser.add_argument("--report-failed", action="store_true",
                        help="a sweep's files: collect those whose run finished, print one line per other "
                             "(missing, damaged, stopped early) and exit 1 if there was one")
    args = parser.parse_args(argv)
    for path, what in ((args.csv, "--csv"), (args.plot, "--plot")):
        why = path and cannot_write(path)
        if why:
            print(f"error: {what} {path}: {why}", file=sys.stderr)
            return 2

    from . import io as mft_io  # here: the sweep-table commands need neither h5py nor numpy

    runs, failed = list(args.runs), []
    if args.report_failed:
        failed = [(path, why) for path in runs for why in [why_failed(path)] if why]
        runs = [path for path in runs if path not in {p for p, _ in failed}]
        for path, why in failed:
            print(f"failed: {path}: {why}")
        print(f"{len(runs)} of {len(args.runs)} runs finished")
        if not runs:
            return 1
    try:
        frame = collect(runs)
    except mft_io.RunFileError as e:
        sys.exit(f"error: {e}")
    print_table(frame)
    for path, what, write in ((args.csv, "--csv", write_csv), (args.plot, "--plot", plot)):
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


# Sweep tables: the runs of a Slurm sweep (scripts/slurm/sweep.sbatch).


def _table_text(table):
    """The text of the table file, without a leading UTF-8 byte-order mark.
    Only a regular file is opened: reading a FIFO would wait for a writer
    forever, a device may never end. The stat before the open keeps the
    open off devices; the open does not block (O_NONBLOCK) and its fstat
    catches a file swapped in between."""
    try:
        mode = os.stat(table).st_mode
        if not stat.S_ISREG(mode):
            raise SweepTableError(f"{table}: {file_kind(mode)}, not a regular file: a sweep table is a CSV file")
        with open(os.open(table, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if not stat.S_ISREG(mode):
                raise SweepTableError(f"{table}: {file_kind(mode)}, not a regular file: a sweep table is a CSV file")
            data = f.read()
    except OSError as e:
        raise SweepTableError(f"{table}: cannot read it ({e.strerror or e})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SweepTableError(f"{table}: not UTF-8 text (byte {e.start} of the file)") from None


def _control(text):
    """The first control character of `text` other than tab, or None."""
    return next((c for c in text if c != "\t" and unicodedata.category(c) == "Cc"), None)


def _cell_spans(line):
    """(start, end) of each cell of a CSV line: it splits at the commas
    outside quotes, as csv does (used to name a cell that csv refuses)."""
    cuts, quoted = [-1], False
    for m in re.finditer('[",]', line):
        if m.group() == '"':
            quoted = not quoted
        elif not quoted:
            cuts.append(m.start())
    cuts.append(len(line))
    return [(a + 1, b) for a, b in zip(cuts, cuts[1:])]


def _named(c):
    return "a NUL byte" if c == "\0" else f"the control character U+{ord(c):04X}"


def read_table(table):
    """The sweep table `table` (a CSV file path) as (header line number,
    keys, rows): see `sweep_rows`."""
    text = _table_text(table)
    numbered = list(enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1))
    lines = []
    for number, line in numbered:
        if line.strip() and not line.lstrip().startswith("#"):
            lines.append((number, line))
        elif _control(line) is not None:
            raise SweepTableError(f"{table}: line {number} (blank or a comment) holds {_named(_control(line))}; "
                                  "no control character but tab may appear in a table")
    if not lines:
        raise SweepTableError(f"{table}: no header (every line is blank or a comment)")

    def fields(number, line, what, keys=None):
        def column(i):
            return keys[i] if keys is not None and i < len(keys) else str(i + 1)
        if len(line.encode()) > CELL_LIMIT:  # first: csv refuses a field past its limit with a traceback
            for i, (start, end) in enumerate(_cell_spans(line)):
                size = len(line[start:end].encode())
                if size > CELL_LIMIT:
                    raise SweepTableError(f"{table}: {what} (line {number}), column {column(i)}, holds a cell "
                                          f"of {size} bytes; a cell may hold at most {CELL_LIMIT} (64 KiB)")
        c = _control(line)
        if c is not None:
            # The column is found before anything else is checked: csv keeps control characters in the field.
            raw = next(csv.reader([line], skipinitialspace=True))
            i = next((k for k, x in enumerate(raw) if c in x), len(raw))
            raise SweepTableError(f"{table}: {what} (line {number}), column {column(i)}, holds {_named(c)}; "
                                  "no control character but tab may appear in a cell")
        if line.count('"') % 2:
            raise SweepTableError(f"{table}: {what} (line {number}) has an unbalanced quote")
        return [x.strip() for x in next(csv.reader([line], skipinitialspace=True))]

    header, line = lines[0]
    keys = fields(header, line, "the header")
    for i, key in enumerate(keys):
        if not key:
            raise SweepTableError(f"{table}: the header (line {header}) has an empty key in column {i + 1}")
        if keys.index(key) != i:
            raise SweepTableError(f"{table}: the header (line {header}) names {key} twice")
        if key in TASK_KEYS:
            raise SweepTableError(f"{table}: the header (line {header}), column {i + 1}, names {key}, "
                                  f"which a table may not set: {TASK_KEYS[key]}")
    rows = []
    for task, (number, line) in enumerate(lines[1:]):
        values = fields(number, line, f"row {task}", keys)
        if len(values) != len(keys):
            raise SweepTableError(f"{table}: row {task} (line {number}) has {len(values)} fields, "
                                  f"the header {len(keys)}")
        rows.append(dict(zip(keys, values)))
    return header, keys, rows


def sweep_rows(table):
    """The runs of the sweep table `table` (a CSV file path) in table order,
    each {configuration key: value} with the keys of the header, values as
    strings ('' for an empty field). Lines whose first non-blank character
    is '#' and blank lines are skipped; spaces around keys and values are
    dropped; a quoted field may hold commas ("0.5,0.25") and doubled quotes,
    not line breaks. The file must be a regular file of UTF-8 text (a
    leading byte-order mark is dropped) with no control character but tab
    (a NUL would split a cell into two arguments of mft), and the header
    may not name a key of TASK_KEYS. Raises SweepTableError naming the
    table and the row or line (and the column of a control character)."""
    return read_table(table)[2]


def check_table(table, known):
    """The rows of the sweep table (`sweep_rows`) after checking that every
    header key is in `known`, mft's configuration keys: a key mft does not
    know would fail every task of the array once it runs. Raises
    SweepTableError naming the first unknown key, its line and column."""
    header, keys, rows = read_table(table)
    for i, key in enumerate(keys):
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            raise SweepTableError(f"{table}: the header (line {header}), column {i + 1}, names {key!r}, "
                                  "which is not an mft configuration key (mft --keys lists them)"
                                  + (f"; did you mean {close[0]}?" if close else ""))
    return rows


def _key_list(text, source):
    keys = {line.strip() for line in text.splitlines() if line.strip()}
    if not keys:
        raise SweepTableError(f"{source}: no configuration keys (expected the output of mft --keys, one a line)")
    return keys


def keys_from(path):
    """mft's configuration keys from a file holding the output of `mft
    --keys` (one a line; '-': standard input)."""
    try:
        if path == "-":
            return _key_list(sys.stdin.read(), "standard input")
        with open(path, encoding="utf-8") as f:
            return _key_list(f.read(), path)
    except (OSError, UnicodeDecodeError) as e:
        raise SweepTableError(f"{path}: cannot read the key list ({getattr(e, 'strerror', None) or e})") from None


def keys_of_program(program, timeout=120):
    """mft's configuration keys as the program `program` prints them with
    `--keys` (run on its own, no MPI launcher)."""
    try:
        done = subprocess.run([program, "--keys"], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout)
    except OSError as e:
        raise SweepTableError(f"{program}: cannot run it ({e.strerror or e})") from None
    except subprocess.TimeoutExpired:
        raise SweepTableError(f"{program} --keys: no answer in {timeout} s") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).decode(errors="replace").strip().splitlines()
        raise SweepTableError(f"{program} --keys failed (exit status {done.returncode}"
                              + (f": {said[-1].strip()})" if said else ")"))
    return _key_list(done.stdout.decode(errors="replace"), f"{program} --keys")


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
    """`python3 -m mft.sweep count TABLE | args TABLE TASK | check TABLE
    (--keys-from FILE | --mft PROGRAM) | collect RUN.h5 ...`"""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = argv[0] if argv else None
    if command == "collect":
        return main(argv[1:])
    if command == "run":
        from . import sweep_run
        return sweep_run.main(argv[1:])
    if command in ("-h", "--help"):
        print(TABLE_USAGE, end="")
        return 0
    shapes = {"count": 1, "args": 2, "check": 3}
    if (command not in shapes or len(argv) != 1 + shapes[command]
            or (command == "check" and argv[2] not in ("--keys-from", "--mft"))):
        print("usage: python3 -m mft.sweep {count TABLE | args TABLE TASK | "
              "check TABLE (--keys-from FILE | --mft PROGRAM) | collect RUN.h5 ... | run TABLE ...} (--help)",
              file=sys.stderr)
        return 2
    try:
        if command == "count":
            print(len(sweep_rows(argv[1])))
        elif command == "check":
            sweep_rows(argv[1])  # a table that cannot be read is refused before mft runs
            known = keys_from(argv[3]) if argv[2] == "--keys-from" else keys_of_program(argv[3])
            print(len(check_table(argv[1], known)))
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

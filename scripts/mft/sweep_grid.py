"""Writes sweep tables: the grid of every combination of some values of some
keys, and the copy of a table with its shared settings (the base
configuration, the options of every row) written in, as submit_sweep.sh
submits it.

  mft-sweep grid KEY=VALUES ... [--base INI] [--args OPTIONS] [-o TABLE] [-- OPTIONS]
  mft-sweep freeze TABLE -o OUT [--base INI] [--args OPTIONS] [-- OPTIONS]

VALUES is a comma-separated list of values and inclusive integer ranges:
model.heads=2,4,8,16 is four values, init.seed=1:3 is 1, 2, 3 and
train.steps=100:400:100 is 100, 200, 300, 400; a value holding commas is
quoted as in CSV ('readout.weights="0.5,0.25","1,0"'). The table has one
row per combination, the first key varying slowest and the last fastest
(so the seeds, given last, are neighbours). The base (a regular file) is
written with its absolute path, so that the table can be run from any
folder.

  mft-sweep grid model.heads=2,4,8,16 init.seed=1:3 --base run.ini -o heads.csv -- --train.steps 500
"""
import argparse
import csv
import io
import itertools
import math
import os
import re
import shlex
import stat
import sys

from . import sweep

RANGE = re.compile(r"^(-?\d+):(-?\d+)(?::(\d+))?$")


def parse_axis(text):
    """(key, [values]) of one 'KEY=VALUES' argument of grid; SweepTableError
    for one that is not."""
    key, equals, values = text.partition("=")
    key = key.strip()
    if not equals or not key:
        raise sweep.SweepTableError(f"{text!r}: not KEY=VALUES (e.g. model.heads=2,4,8 or init.seed=1:3)")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
        raise sweep.SweepTableError(f"{text!r}: {key!r} is no configuration key (letters, digits, '_', '.')")
    if key in sweep.TASK_KEYS:
        raise sweep.SweepTableError(f"{key}: a table may not set it: {sweep.TASK_KEYS[key]}")
    if sweep._control(values) is not None:
        raise sweep.SweepTableError(f"{key}: its values hold {sweep._named(sweep._control(values))}")
    if values.count('"') % 2:
        raise sweep.SweepTableError(f"{key}={values}: an unbalanced quote")
    items = [x.strip() for x in next(csv.reader([values], skipinitialspace=True), [])]
    out = []
    for item in items:
        match = RANGE.match(item)
        if match:
            first, last, step = int(match[1]), int(match[2]), int(match[3] or 1)
            if step < 1 or last < first:
                raise sweep.SweepTableError(f"{key}: the range {item} is empty (A:B or A:B:STEP counts up from A "
                                            "to B, both included, STEP at least 1)")
            count = (last - first) // step + 1
            if len(out) + count > sweep.ROW_LIMIT:
                raise sweep.SweepTableError(f"{key}: the range {item} has {count} values; a grid may have at most "
                                            f"{sweep.ROW_LIMIT} rows")
            out += [str(v) for v in range(first, last + 1, step)]
        elif item:
            out.append(item)
        else:
            raise sweep.SweepTableError(f"{key}={values}: an empty value (give at least one value, none empty)")
    if not out:
        raise sweep.SweepTableError(f"{key}: no values")
    seen = set()
    for v in out:
        if v in seen:
            raise sweep.SweepTableError(f"{key}: the value {v} comes twice (each combination is one run)")
        seen.add(v)
    for v in out:
        if len(v.encode()) > sweep.CELL_LIMIT:
            raise sweep.SweepTableError(f"{key}: a value of {len(v.encode())} bytes; a cell may hold at most "
                                        f"{sweep.CELL_LIMIT} (64 KiB)")
    return key, out


def grid(axes):
    """(keys, rows) of the product of `axes`, [(key, values)], the last
    key varying fastest."""
    keys = [k for k, _ in axes]
    twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    if twice is not None:
        raise sweep.SweepTableError(f"{twice} is given twice (give all its values in one KEY=VALUES)")
    rows = math.prod(len(v) for _, v in axes)
    if rows > sweep.ROW_LIMIT:
        raise sweep.SweepTableError(f"{' x '.join(str(len(v)) for _, v in axes)} = {rows} combinations; a grid may "
                                    f"have at most {sweep.ROW_LIMIT} rows")
    return keys, [list(values) for values in itertools.product(*(v for _, v in axes))]


def base_file(base):
    """The absolute path of the base configuration `base`, a regular file."""
    try:
        mode = os.stat(base).st_mode
    except OSError as e:
        raise sweep.SweepTableError(f"--base {base}: cannot read it ({e.strerror or e})") from None
    if not stat.S_ISREG(mode):
        raise sweep.SweepTableError(f"--base {base}: not a regular file (a configuration file, INI)")
    return os.path.abspath(base)


def table_text(keys, rows, base=None, args=(), comment=None):
    """A sweep table: the comment line, the settings, the header, the rows."""
    out = io.StringIO()
    if comment and sweep._control(comment) is None:
        out.write(f"# {comment}\n")
    if base:
        out.write(f"#: base = {base}\n")
    if args:
        out.write(f"#: args = {shlex.join(args)}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(keys)
    writer.writerows(rows)
    return out.getvalue()


def write(text, path, inputs=()):
    """`text` to `path` ('-' or None: stdout), never over one of `inputs`."""
    if not path or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from .h5checks import cannot_write
    why = cannot_write(path, inputs)
    if why:
        raise sweep.SweepTableError(f"-o {path}: {why}")
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError as e:
        raise sweep.SweepTableError(f"-o {path}: cannot write it ({e.strerror or e})") from None


def main(argv):
    command, (argv, after) = argv[0], sweep.split_options(argv[1:])
    parser = argparse.ArgumentParser(prog=f"mft-sweep {command}", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    if command == "grid":
        parser.add_argument("axes", nargs="+", metavar="KEY=VALUES", help="a key and its values")
    else:
        parser.add_argument("table", help="the sweep table to copy")
    parser.add_argument("-o", "--output", required=command == "freeze", metavar="TABLE",
                        help="the table to write (default for grid: stdout)")
    sweep.shared_arguments(parser)
    args = parser.parse_args(argv)
    try:
        extra = sweep.extra_words(args, after)
        why = sweep.bad_shared_args(extra)
        if why:
            raise sweep.SweepTableError(f"the options for every row: {why}")
        if command == "grid":
            keys, rows = grid([parse_axis(a) for a in args.axes])
            base = base_file(args.base) if args.base else None
            comment = "mft-sweep grid " + " ".join(shlex.quote(a) for a in args.axes)
        else:
            _, keys, table_rows, _ = sweep._parse(args.table)
            base, extra = sweep.shared_options(args.table, args.base, extra)
            base = base_file(base) if base else None
            rows = [[r[k] for k in keys] for r in table_rows]
            comment = f"{args.table} with its settings, as submitted"
        text = table_text(keys, rows, base, extra, comment)
        write(text, args.output, [f for f in (args.base, getattr(args, "table", None), base) if f])
    except sweep.SweepTableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.output and args.output != "-":
        print(f"{args.output}: {len(rows)} runs")
    return 0

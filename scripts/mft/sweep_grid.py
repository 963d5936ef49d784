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
(so the seeds, given last, are neighbours). An empty value is the key's
default (an empty cell: the key is not given): init.sigma_qk=,0.1 is the
default and 0.1. The base (a regular file) is written with its absolute
path, so that the table can be run from any folder.

Grids compose: `A zip B` pairs two keys' values one to one (equal counts)
instead of combining every one with every other; `+` joins blocks of rows
one after the other, each block its own grid, and a key one block lacks is
empty (the default) in its rows. zip binds tighter than the product, and
the product tighter than +. A quoted argument may hold several KEY=VALUES
(a block).

  mft-sweep grid model.heads=2,4,8,16 init.seed=1:3 --base run.ini -o heads.csv -- --train.steps 500
  mft-sweep grid "model.heads=4,8 init.seed=1:2" + "model.attention=relu init.sigma_qk=0.1 init.seed=1:2"
  mft-sweep grid model.heads=4,8,16 zip train.dtau=0.1,0.05,0.02 init.seed=1:3
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

from . import sweep_table

RANGE = re.compile(r"^(-?\d+):(-?\d+)(?::(\d+))?$")


def parse_axis(text):
    """(key, [values]) of one 'KEY=VALUES' argument of grid; SweepTableError
    for one that is not."""
    key, equals, values = text.partition("=")
    key = key.strip()
    if not equals or not key:
        raise sweep_table.SweepTableError(f"{text!r}: not KEY=VALUES (e.g. model.heads=2,4,8 or init.seed=1:3)")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", key):
        raise sweep_table.SweepTableError(f"{text!r}: {key!r} is no configuration key (letters, digits, '_', '.')")
    if key in sweep_table.TASK_KEYS:
        raise sweep_table.SweepTableError(f"{key}: a table may not set it: {sweep_table.TASK_KEYS[key]}")
    if sweep_table._control(values) is not None:
        raise sweep_table.SweepTableError(f"{key}: its values hold {sweep_table._named(sweep_table._control(values))}")
    if values.count('"') % 2:
        raise sweep_table.SweepTableError(f"{key}={values}: an unbalanced quote")
    items = [x.strip() for x in next(csv.reader([values], skipinitialspace=True), [])]
    out = []
    for item in items:
        match = RANGE.match(item)
        if match:
            first, last, step = int(match[1]), int(match[2]), int(match[3] or 1)
            if step < 1 or last < first:
                raise sweep_table.SweepTableError(f"{key}: the range {item} is empty (A:B or A:B:STEP counts up from A "
                                            "to B, both included, STEP at least 1)")
            count = (last - first) // step + 1
            if len(out) + count > sweep_table.ROW_LIMIT:
                raise sweep_table.SweepTableError(f"{key}: the range {item} has {count} values; a grid may have at most "
                                            f"{sweep_table.ROW_LIMIT} rows")
            out += [str(v) for v in range(first, last + 1, step)]
        else:
            out.append(item)  # "" is the key's default: an empty cell
    if not out:
        out = [""]
    seen = set()
    for v in out:
        if v in seen:
            raise sweep_table.SweepTableError(f"{key}: the value {v} comes twice (each combination is one run)")
        seen.add(v)
    for v in out:
        if len(v.encode()) > sweep_table.CELL_LIMIT:
            raise sweep_table.SweepTableError(f"{key}: a value of {len(v.encode())} bytes; a cell may hold at most "
                                        f"{sweep_table.CELL_LIMIT} (64 KiB)")
    return key, out


def words_of(arguments):
    """The grid's words: each argument split at blanks outside double quotes,
    a piece that is neither KEY=..., '+' nor 'zip' joined to the one before
    (a value list may hold ', ' between quoted values)."""
    words = []
    for argument in arguments:
        pieces, piece, quoted = [], "", False
        for c in argument:
            if c == '"':
                quoted = not quoted
            if c.isspace() and not quoted:
                if piece:
                    pieces.append(piece)
                piece = ""
            else:
                piece += c
        if piece:
            pieces.append(piece)
        for piece in pieces:
            starts = piece in ("+", "zip") or re.match(r"[A-Za-z0-9_.-]+=", piece)
            if words and not starts and words[-1] not in ("+", "zip"):
                words[-1] += " " + piece
            else:
                words.append(piece)
    return words


def zipped(a, b):
    """(keys, rows) of two blocks paired row by row."""
    if len(a[1]) != len(b[1]):
        raise sweep_table.SweepTableError(f"zip: {', '.join(a[0])} has {len(a[1])} values and {', '.join(b[0])} "
                                    f"{len(b[1])}; zip pairs them one to one")
    return a[0] + b[0], [x + y for x, y in zip(a[1], b[1])]


def block(words):
    """(keys, rows) of one block: KEY=VALUES words, each a term of the
    product, `zip` pairing the terms on its sides."""
    terms, pending = [], False
    for word in words:
        if word == "zip":
            if not terms or pending:
                raise sweep_table.SweepTableError("zip: it pairs the KEY=VALUES on its two sides")
            pending = True
            continue
        key, values = parse_axis(word)
        term = ([key], [[v] for v in values])
        terms.append(zipped(terms.pop(), term) if pending else term)
        pending = False
    if pending or not terms:
        raise sweep_table.SweepTableError("zip: it pairs the KEY=VALUES on its two sides" if pending else
                                    "an empty block (give KEY=VALUES on each side of +)")
    keys = [k for t in terms for k in t[0]]
    twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    if twice is not None:
        raise sweep_table.SweepTableError(f"{twice} is given twice (give all its values in one KEY=VALUES)")
    rows = math.prod(len(t[1]) for t in terms)
    if rows > sweep_table.ROW_LIMIT:
        raise sweep_table.SweepTableError(f"{' x '.join(str(len(t[1])) for t in terms)} = {rows} combinations; a grid "
                                    f"may have at most {sweep_table.ROW_LIMIT} rows")
    return keys, [[v for part in combo for v in part] for combo in itertools.product(*(t[1] for t in terms))]


def composed(arguments):
    """(keys, rows) of the grid's arguments: blocks joined by '+', a key a
    block lacks empty (its default) in that block's rows."""
    blocks, current = [], []
    for word in words_of(arguments) + ["+"]:
        if word == "+":
            blocks.append(block(current))
            current = []
        else:
            current.append(word)
    keys = list(dict.fromkeys(k for b in blocks for k in b[0]))
    rows = [[dict(zip(b[0], r)).get(k, "") for k in keys] for b in blocks for r in b[1]]
    if len(rows) > sweep_table.ROW_LIMIT:
        raise sweep_table.SweepTableError(f"{len(rows)} rows; a grid may have at most {sweep_table.ROW_LIMIT}")
    seen = {}
    for i, r in enumerate(rows):
        if tuple(r) in seen:
            raise sweep_table.SweepTableError(f"rows {seen[tuple(r)]} and {i} are one run ("
                                        + ", ".join(f"{k}={v or 'default'}" for k, v in zip(keys, r)) + ")")
        seen[tuple(r)] = i
    return keys, rows


def base_file(base):
    """The absolute path of the base configuration `base`, a regular file."""
    try:
        mode = os.stat(base).st_mode
    except OSError as e:
        raise sweep_table.SweepTableError(f"--base {base}: cannot read it ({e.strerror or e})") from None
    if not stat.S_ISREG(mode):
        raise sweep_table.SweepTableError(f"--base {base}: not a regular file (a configuration file, INI)")
    return os.path.abspath(base)


def table_text(keys, rows, base=None, args=(), comment=None):
    """A sweep table: the comment line, the settings, the header, the rows."""
    out = io.StringIO()
    if comment and sweep_table._control(comment) is None:
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
        raise sweep_table.SweepTableError(f"-o {path}: {why}")
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError as e:
        raise sweep_table.SweepTableError(f"-o {path}: cannot write it ({e.strerror or e})") from None


def main(argv):
    command, (argv, after) = argv[0], sweep_table.split_options(argv[1:])
    parser = argparse.ArgumentParser(prog=f"mft-sweep {command}", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    if command == "grid":
        parser.add_argument("axes", nargs="+", metavar="KEY=VALUES",
                            help="a key and its values; zip and + compose them (above)")
    else:
        parser.add_argument("table", help="the sweep table to copy")
    parser.add_argument("-o", "--output", required=command == "freeze", metavar="TABLE",
                        help="the table to write (default for grid: stdout)")
    sweep_table.shared_arguments(parser)
    args = parser.parse_args(argv)
    try:
        extra = sweep_table.extra_words(args, after)
        why = sweep_table.bad_shared_args(extra)
        if why:
            raise sweep_table.SweepTableError(f"the options for every row: {why}")
        if command == "grid":
            keys, rows = composed(args.axes)
            base = base_file(args.base) if args.base else None
            comment = "mft-sweep grid " + " ".join(shlex.quote(a) for a in args.axes)
        else:
            _, keys, table_rows, _ = sweep_table._parse(args.table)
            base, extra = sweep_table.shared_options(args.table, args.base, extra)
            base = base_file(base) if base else None
            rows = [[r[k] for k in keys] for r in table_rows]
            comment = f"{args.table} with its settings, as submitted"
        text = table_text(keys, rows, base, extra, comment)
        write(text, args.output, [f for f in (args.base, getattr(args, "table", None), base) if f])
    except sweep_table.SweepTableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.output and args.output != "-":
        print(f"{args.output}: {len(rows)} runs")
    return 0

"""Sweep tables, the model under every sweep command: a CSV file of
configuration keys, one row per run (made by hand or by `mft-sweep grid`),
with the base configuration and the options every row shares; each row as
mft's options. The commands (mft.sweep) and their parts (sweep_check,
sweep_grid, sweep_run, sweep_collect, sweep_plot) import this module and
it imports none of them. `mft-sweep --help` describes the table.
"""
import csv
import difflib
import os
import re
import shlex
import stat
import subprocess
import sys
import unicodedata

from .h5checks import file_kind

# Keys a sweep table may not set, and why: the task sets them itself.
TASK_KEYS = {"output.file": "each task writes runs/sweep-ARRAYJOB-TASK.h5 (set by sweep.sbatch; "
                            "mft refuses a key given twice)"}
# Options of mft train that the shared options of a table may not give, and why.
TASK_OPTIONS = {"--restart": "each task continues its own file (run-mft.sh, --resume)",
                "--resume": "each task continues its own file (run-mft.sh, --resume)",
                "--dry-run": "a task runs; mft-sweep check does the dry run",
                "--config": "name the base configuration with base (--base)"}
# The settings a table's '#: NAME = VALUE' lines may give.
SETTINGS = ("base", "args")
# The most bytes (UTF-8) a cell of a sweep table may hold: a value of mft's
# configuration is far shorter, and csv refuses a field past its own limit.
CELL_LIMIT = 64 * 1024
# The most rows a grid may have: a sweep of more runs than this is a typo
# (a range one digit too long), refused before anything is expanded.
ROW_LIMIT = 100_000


class SweepTableError(Exception):
    """A sweep table that cannot be read, a row that it lacks, or a header
    key that is not in the key list it is checked against."""


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
    return _parse(table)[:3]


def table_settings(table):
    """The settings of the sweep table `table`, its '#: NAME = VALUE'
    lines: {"base": path of the base configuration or None, "args": [mft
    options]}. A relative base is taken from the table's folder."""
    return _parse(table)[3]


def _setting(table, number, line, settings):
    """Reads the setting line `line` ('#: base = run.ini') into `settings`."""
    name, equals, value = line.lstrip()[2:].partition("=")
    name, value = name.strip(), value.strip()
    if not equals or name not in SETTINGS:
        raise SweepTableError(f"{table}: line {number}: {line.strip()!r} is no setting "
                              f"(a line '#: NAME = VALUE', NAME one of {', '.join(SETTINGS)})")
    if name in settings["lines"]:
        raise SweepTableError(f"{table}: line {number} sets {name} again (line {settings['lines'][name]} set it)")
    settings["lines"][name] = number
    if name == "base":
        if not value:
            raise SweepTableError(f"{table}: line {number}: base names no file")
        settings["base"] = os.path.join(os.path.dirname(table), value)
    else:
        try:
            words = shlex.split(value)
        except ValueError as e:
            raise SweepTableError(f"{table}: line {number}: args: {e}") from None
        settings["args"] = words
        why = bad_shared_args(words)
        if why:
            raise SweepTableError(f"{table}: line {number}: args: {why}")


def bad_shared_args(words):
    """Why mft options shared by every row cannot be (a key the task sets
    itself, an option that changes what a task does), or None."""
    for word in words:
        option = word.split("=", 1)[0]
        if option[2:] in TASK_KEYS:
            return f"{option} is set by each task ({TASK_KEYS[option[2:]]})"
        if option in TASK_OPTIONS:
            return f"{option}: {TASK_OPTIONS[option]}"
    return None


def _parse(table):
    text = _table_text(table)
    numbered = list(enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1))
    lines = []
    settings = {"base": None, "args": [], "lines": {}}
    for number, line in numbered:
        if line.strip() and not line.lstrip().startswith("#"):
            lines.append((number, line))
        elif _control(line) is not None:
            raise SweepTableError(f"{table}: line {number} (blank or a comment) holds {_named(_control(line))}; "
                                  "no control character but tab may appear in a table")
        elif line.lstrip().startswith("#:"):
            _setting(table, number, line, settings)
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
    return header, keys, rows, {"base": settings["base"], "args": settings["args"],
                                "row lines": [number for number, _ in lines[1:]]}


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


def shared_options(table, base=None, extra=()):
    """(base, args): the base configuration and the options every row of
    `table` shares, the table's settings with `base` and `extra` (from the
    command line) added. A base given both ways must be the same file; the
    options add up (mft refuses a key given twice)."""
    settings = table_settings(table)
    if base and settings["base"] and os.path.realpath(base) != os.path.realpath(settings["base"]):
        raise SweepTableError(f"{table}: its base is {settings['base']}; --base {base} names another "
                              "(give --base only for a table without a base line)")
    why = bad_shared_args(extra)
    if why:
        raise SweepTableError(f"the options for every row: {why}")
    return base or settings["base"], settings["args"] + list(extra)


def sweep_args(table, task, base=None, extra=()):
    """Row `task` (0-based) of the sweep table as mft options: --config
    BASE (the table's base or `base`), then ['--key', 'value', ...] in
    header order, then the shared options (the table's and `extra`); a key
    whose value is empty in this row is left out (mft takes its default or
    the base's value)."""
    rows = sweep_rows(table)
    if not 0 <= task < len(rows):
        raise SweepTableError(f"{table}: no row {task} (its rows are 0 to {len(rows) - 1})"
                              if rows else f"{table}: no row {task} (the table has a header and no rows)")
    return all_args(table, base, extra)[task]


def all_args(table, base=None, extra=()):
    """The mft options of every row of `table` (see sweep_args)."""
    base, shared = shared_options(table, base, extra)
    out = []
    for row in sweep_rows(table):
        args = ["--config", base] if base else []
        for key, value in row.items():
            if value != "":
                args += [f"--{key}", value]
        out.append(args + shared)
    return out


def expanded_rows(table, base=None, extra=()):
    """The rows of `table` as `mft-sweep check` shows them: one line per
    row, "row TASK (line N): key = value, ..." (an empty cell as "key =
    default"), then "every row: OPTIONS" (the base and the shared options,
    as shell words) when there are any."""
    base, shared = shared_options(table, base, extra)
    lines = _parse(table)[3]["row lines"]
    out = []
    for task, row in enumerate(sweep_rows(table)):
        cells = ", ".join(f"{key} = {value if value != '' else 'default'}" for key, value in row.items())
        out.append(f"row {task} (line {lines[task]}): {cells}")
    every = (["--config", base] if base else []) + shared
    if every:
        out.append(f"every row: {shlex.join(every)}")
    return out


def split_options(argv):
    """(argv before '--', the words after it): the words after '--' are mft
    options for every row."""
    argv = list(argv)
    if "--" in argv:
        at = argv.index("--")
        return argv[:at], argv[at + 1:]
    return argv, []


def shared_arguments(parser):
    """--base and --args of the commands that read or write a table."""
    parser.add_argument("--base", metavar="INI", help="a configuration file passed as --config INI to every row")
    parser.add_argument("--args", metavar="OPTIONS", action="append", default=[],
                        help="mft options added to every row, as one shell-quoted string (or give them after --)")


def extra_words(args, after):
    """The shared options of --args (shell words) and after '--'."""
    words = []
    for text in args.args:
        try:
            words += shlex.split(text)
        except ValueError as e:
            raise SweepTableError(f"--args {text!r}: {e}") from None
    return words + list(after)

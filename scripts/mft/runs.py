"""Many runs at once: one xarray.Dataset whose dimensions are the
configuration keys that differ between the runs, and the labels that name
each run by those keys ('M=4 seed=2').

    >>> import mft.io
    >>> ds = mft.io.open_runs("runs/sweep-*.h5")                   # doctest: +SKIP
    >>> ds.risk.mean("init.seed")                                  # doctest: +SKIP
    >>> ds.risk.sel({"model.heads": 16, "init.seed": 2})           # doctest: +SKIP
    >>> mft.io.open_runs(paths, history=True).risk                 # doctest: +SKIP

The keys that vary are found in /config (`Run.config`); keys that only say
how a run reports or where it writes (BOOKKEEPING) never count, and a key
that some files lack (one added to mft after they were written) counts only
when named.
"""
import glob
import os

import numpy as np

from .h5checks import RunFileError

# Keys that change where and how a run reports, never what it computes.
BOOKKEEPING = frozenset({
    "output.file", "output.log", "output.overwrite", "output.snapshot_every", "output.history_every",
    "train.print_every", "train.max_walltime", "run.max_memory", "parallel.sequence_groups",
})
SEED = "init.seed"
# The symbols of MODEL.md for the keys that have one, as labels use them.
SYMBOLS = {
    "model.heads": "M", "model.slices": "L", "model.d": "d", "model.head_dim": "d_h",
    "model.mlp_particles": "M_f", "model.mlp_width": "d_f", "data.sequences": "N", "data.tokens": "n",
    "data.test_sequences": "N_test", "init.seed": "seed", "train.dtau": "dtau", "train.lambda": "lambda",
    "train.method": "method", "train.batch": "b", "train.temperature": "T",
}


def _glob_chars(text):
    return any(c in text for c in "*?[")


def expand(paths_or_glob):
    """The files of a path, a glob pattern or a list of either, in the order
    given (each pattern's matches sorted); RunFileError for a pattern that
    matches nothing or an empty list."""
    items = [paths_or_glob] if isinstance(paths_or_glob, (str, os.PathLike)) else list(paths_or_glob)
    out = []
    for item in items:
        item = os.fspath(item)
        if _glob_chars(item) and not os.path.exists(item):
            matches = sorted(glob.glob(item))
            if not matches:
                raise RunFileError(f"{item}: no file matches the pattern")
            out += matches
        else:
            out.append(item)
    if not out:
        raise RunFileError("no run files given")
    return out


def value_text(value):
    """A configuration value as a label shows it: 0.1, 4, adam, 0.5,0.25."""
    if isinstance(value, np.ndarray):
        return ",".join(value_text(v) for v in value.ravel().tolist())
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def coordinate(value):
    """A configuration value as a coordinate: a number or text (a list-valued
    key as its text)."""
    return value_text(value) if isinstance(value, np.ndarray) else value


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b)


def differing_keys(configs):
    """The /config keys whose values differ between the configurations
    (dicts of `Run.config`), in alphabetical order: keys every one of them
    has, BOOKKEEPING left out."""
    if not configs:
        return []
    common = set(configs[0]).intersection(*configs[1:]) - BOOKKEEPING
    return sorted(k for k in common if any(not _same(configs[0][k], c[k]) for c in configs[1:]))


def label_keys(configs):
    """differing_keys with init.seed moved last: the keys a label names."""
    keys = differing_keys(configs)
    return [k for k in keys if k != SEED] + [k for k in keys if k == SEED]


def run_labels(configs, keys=None):
    """One label per configuration: 'M=4 seed=2', the keys that differ
    between them (init.seed last) or `keys`, each by its symbol (SYMBOLS),
    else by its name within its section, else (two keys of one name) in
    full; '' for every run when no key differs."""
    keys = label_keys(configs) if keys is None else list(keys)
    short = {k: SYMBOLS.get(k, k.split(".")[-1]) for k in keys}
    names = list(short.values())
    short = {k: (s if names.count(s) == 1 else k) for k, s in short.items()}
    return [" ".join(f"{short[k]}={value_text(cfg[k])}" for k in keys if k in cfg) for cfg in configs]


# The order in which open_runs gives up a key as a dimension when the
# others determine it: the training's and initial scales' keys first, the
# model's last (a ReLU block with its own scales and step is a row of
# model.attention, not three dimensions).
SECTION_ORDER = ("output.", "train.", "init.", "data.", "loss.", "readout.", "depth.", "ntk.", "parallel.", "run.",
                 "model.")


def run_status(run, hist=...):
    """(status, why) of a training run as its file tells: "diverged" (the
    run said so in /history.end, at its first step too), "complete" (its
    history reaches train.steps), else "stopped" (a signal, the wall time,
    a crash or still running: its log says which); why is None for a
    complete run. A file without /history (mft forward, ntk) is
    "complete". `hist`: the run's `history` when the caller has read it."""
    hist = run.history if hist is ... else hist
    if hist is None:
        return "complete", None
    rows = len(hist.get("step", ()))
    last = int(hist["step"][-1]) if rows else 0
    steps = int(run.config.get("train.steps", last))
    if run.end == "diverged":
        return "diverged", f"diverged at step {last} of {steps}: {run.end_error or 'non-finite values'}"
    if rows == 0:
        return "stopped", f"stopped before its first history row (step 0 of {steps}; see its log)"
    if last < steps:
        return "stopped", f"stopped at step {last} of {steps} (diverged, failed or out of time; see its log)"
    return "complete", None


def tidy_value(value):
    """A configuration value as a table's cell: "true"/"false" as booleans,
    a number as a number, a list as its text."""
    value = coordinate(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) and value in ("true", "false"):
        return value == "true"
    return value


def filled_dimensions(keys, configs):
    """The keys of `keys` that a grid needs: each key that the others
    determine (its value is a function of theirs over these runs, and they
    still tell every run apart) is dropped, in the order of SECTION_ORDER
    (init.seed kept), so that co-varying keys give one dimension."""
    def cells(subset):
        return [tuple(value_text(c[k]) for k in subset) for c in configs]

    kept = list(keys)
    def rank(k):
        return next((i for i, p in enumerate(SECTION_ORDER) if k.startswith(p)), len(SECTION_ORDER))
    for key in sorted((k for k in keys if k != SEED), key=lambda k: (rank(k), [-ord(ch) for ch in k])):
        rest = [k for k in kept if k != key]
        if not rest:
            break
        where = cells(rest)
        value = {}
        if len(set(where)) == len(set(cells(kept))) and all(
                value.setdefault(w, value_text(c[key])) == value_text(c[key]) for w, c in zip(where, configs)):
            kept = rest
    return kept


def _history_rows(run, step, history):
    """[(step or None, {measure: value})] of one run: its last history row,
    the row of `step`, or every row (`history`); for a run without a history,
    its /forward and /ntk results (one row)."""
    from . import outputs

    frame = run.history_frame()  # the file's order of columns
    if frame is None or len(frame) == 0:
        if step is not None:
            raise RunFileError(f"{run.path}: no /history, so no row of step {step}")
        return [(0 if history else None, outputs.measures(run))]
    steps = frame["step"].to_numpy()
    if steps.dtype.kind not in "iu":
        bad = steps[~np.isfinite(steps) | (steps != np.round(steps))] if steps.dtype.kind == "f" else steps
        if bad.size:
            raise RunFileError(f"{run.path}: /history/step holds values that are not whole numbers "
                               f"({steps.dtype}, e.g. {bad[0]})")
    columns = [c for c in frame.columns if c != "step"]
    if history:
        last = {int(s): i for i, s in enumerate(steps)}  # a repeated step: its last row
        picked = list(last.values())
    elif step is None:
        picked = [len(steps) - 1]
    else:
        rows = np.flatnonzero(steps == step)
        if rows.size == 0:
            raise RunFileError(f"{run.path}: no history row of step {step} (rows from step {steps[0]} "
                               f"to {steps[-1]})")
        picked = [int(rows[-1])]
    return [(int(steps[i]), {c: frame[c].iat[i].item() for c in columns}) for i in picked]


def open_runs(paths_or_glob, dims=None, step=None, history=False, tidy=False):
    """Run files as one xarray.Dataset of their measures, one dimension per
    configuration key that varies between them.

    paths_or_glob: a path, a glob pattern ('runs/sweep-*.h5') or a list of
    either. dims: the keys that become dimensions, in that order; by default
    every key that differs between the files (`differing_keys`), then
    init.seed, even when every run has the same one. Each coordinate is
    sorted ascending. The measures are, per run, the columns of /history at
    its last row (or at the row of training step `step`), with the step and
    tau of that row; or, with history=True, every row, along a further
    dimension `step` (a run without a row of some step has NaN there); for
    a run without a history (mft forward, mft ntk) the numeric results of
    /forward and /ntk (risk, norm_drift, lambda_min, ...). A measure a run
    lacks, and a cell of the grid no run fills, is NaN; `file` gives each
    cell's path. The keys every file shares with one value are attributes
    of the Dataset.

    Keys that the other keys determine (a block of ReLU runs with their
    own scales and step) are no dimensions of their own: by default the
    dimensions are `filled_dimensions` of the differing keys, and each key
    dropped is a variable over the others (NaN where no run is).

    tidy=True: a pandas.DataFrame in long format instead, one row per (run,
    history row) (or per run at `step`): `file`, `status` (complete,
    stopped, diverged: `run_status`), every differing key and init.seed as
    columns (booleans and numbers as such), `step` and the history's
    columns. Two runs at the same keys are rows of their own.

    RunFileError, one line, for a file that is not an mft run, a key of
    `dims` a file lacks, a `step` a run has no row of, and two files at the
    same coordinates (naming both)."""
    import pandas as pd
    import xarray as xr

    from .io import open_run

    if step is not None and history:
        raise ValueError("open_runs: give step or history=True, not both")
    paths = expand(paths_or_glob)
    configs, rows, statuses = [], [], []
    for path in paths:
        with open_run(path) as run:
            configs.append(run.config)
            rows.append(_history_rows(run, step, history or (tidy and step is None)))
            statuses.append(run_status(run)[0] if tidy else None)  # only the long format has it
    if dims is not None:
        keys = list(dims)
    else:
        keys = [k for k in differing_keys(configs) if k != SEED]
        keys += [SEED] if all(SEED in cfg for cfg in configs) else []
    if tidy:
        return _tidy_frame(paths, configs, rows, statuses, keys)
    variables = []
    if dims is None:
        filled = filled_dimensions(keys, configs)
        variables = [k for k in keys if k not in filled]
        keys = filled
    for path, cfg in zip(paths, configs):
        missing = [k for k in keys if k not in cfg]
        if missing:
            raise RunFileError(f"{path}: no configuration key {', '.join(missing)} in /config")
    seen = {}
    for path, cfg in zip(paths, configs):
        where = tuple(value_text(cfg[k]) for k in keys)
        if where in seen:
            other = differing_keys([configs[seen[where]], cfg])
            hint = (f"; they differ in {', '.join(other)}: name it in dims" if other
                    else "; their configurations are the same")
            raise RunFileError(f"{paths[seen[where]]} and {path} have the same coordinates "
                               f"({', '.join(f'{k}={v}' for k, v in zip(keys, where)) or 'no dimensions'}){hint}")
        seen[where] = len(seen)

    for k in keys:  # a coordinate is sorted: text and numbers do not mix
        kinds = {isinstance(coordinate(cfg[k]), str): path for path, cfg in zip(paths, configs)}
        if len(kinds) == 2:
            raise RunFileError(f"{k}: text in {kinds[True]} and a number in {kinds[False]}; a dimension's values are "
                               "of one kind")
    records = []
    for path, cfg, run_rows in zip(paths, configs, rows):
        for row_step, values in run_rows:
            record = {k: coordinate(cfg[k]) for k in keys}
            values = {**{k: coordinate(cfg[k]) for k in variables}, **values}
            if history:
                record["step"] = row_step
            elif row_step is not None:
                values = {"step": row_step, **values}
            records.append({**record, **values, "file": path})
    index = keys + (["step"] if history else [])
    frame = pd.DataFrame.from_records(records)
    if index:
        frame = frame.set_index(index)
        ds = xr.Dataset.from_dataframe(frame).sortby(index)  # every coordinate ascending
    else:
        ds = xr.Dataset.from_dataframe(frame).squeeze("index", drop=True)
    common = [k for k in sorted(set(configs[0]).intersection(*configs[1:]))
              if k not in keys and all(_same(configs[0][k], c[k]) for c in configs[1:])]
    ds.attrs.update({k: coordinate(configs[0][k]) for k in common})
    return ds


def _tidy_frame(paths, configs, rows, statuses, keys):
    """open_runs(tidy=True)'s frame (see there)."""
    import pandas as pd

    records = []
    for path, cfg, status, run_rows in zip(paths, configs, statuses, rows):
        for row_step, values in run_rows:
            record = {"file": path, "status": status, **{k: tidy_value(cfg[k]) for k in keys if k in cfg}}
            records.append({**record, "step": row_step, **values})
    frame = pd.DataFrame.from_records(records)
    for k in keys:  # a key some files lack: NaN there
        if k in frame and frame[k].map(lambda v: isinstance(v, bool)).all():
            frame[k] = frame[k].astype(bool)
    return frame

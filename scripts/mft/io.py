"""The one reader of mft's HDF5 run files (schema mft/1, see docs/FORMAT.md).

Every analysis tool opens runs through `open_run`, which raises
RunFileError, with a one-line message, for a file that is not an mft/1 run.
Besides plain NumPy arrays, a `Run` gives its particles as labelled arrays
(`particles_xarray`, `particles_dataset`, need xarray) and its history as a
table (`history_frame`, needs pandas); those two libraries are imported only
when these methods are called.

In a notebook:

    >>> import mft
    >>> with mft.open_run("runs/icl.h5") as run:          # doctest: +SKIP
    ...     print(run)                                     # what it holds
    ...     frame = run.history_frame()                    # pandas
    ...     V = run.particles_xarray("V").sel(step=200)    # xarray, by step
    ...     ds = run.particles_dataset()                   # every species

A run killed while it wrote a snapshot (a crash, a full disk) leaves rows
past the last complete one: half written, often zeros, and the datasets may
then differ in length. mft counts the complete rows in the attributes
`/particles.complete` (snapshots: rows of every /particles and /optimizer
dataset) and `/history.complete` (rows of every /history dataset), and a
`Run` only ever shows the rows before them. A file whose counts contradict
its datasets is damaged: every accessor raises RunFileError, one line, and
a tool's `main` wrapped in `exit_on_run_file_error` prints it as
`error: ...` instead of a traceback.
"""
import functools
import os
import sys

import h5py
import numpy as np

from . import h5checks
from .h5checks import RunFileError  # noqa: F401 (mft.io.RunFileError, as ever)

FORMAT = "mft/1"
# The particle datasets of files from before the `species` attribute, with
# their kinds. A file's datasets are the tagged ones, each of the kind its
# attribute names; these names stand in only for an untagged dataset (an
# older file, or one that lost the attribute). A file records no order of
# its datasets (HDF5 lists them alphabetically), so these names also keep
# the writer's order in listings, and the others follow alphabetically.
SPECIES_KINDS = {"Q": "heads", "K": "heads", "V": "heads", "W1": "neurons", "W2": "neurons"}
SPECIES = tuple(SPECIES_KINDS)
# The first columns of `Run.history_frame` for files whose /history has no
# `columns` attribute (which gives the order of newer files).
HISTORY_COLUMNS = ("step", "tau", "risk", "objective", "grad_norm", "wall_time")
# The vector columns of /history, (rows, length), and what their second axis counts.
HISTORY_VECTORS = {"test_risk_by_position": "position", "previous_token_score": "slice", "induction_score": "slice"}


_one_line = h5checks.one_line


def _integer(value):
    """An attribute as a Python int when it is one integer (a scalar, not a
    float, a bool or an array), else None."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, np.integer):
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _by_rows(rows):
    """{dataset: rows} as '/particles/step, /particles/tau: 10 rows; /particles/Q: 11 rows'."""
    groups = {}
    for name, count in rows.items():
        groups.setdefault(count, []).append(name)
    return "; ".join(f"{', '.join(names)}: {count} rows" for count, names in groups.items())


def _warning_line(message, category, filename, lineno, file=None, line=None):
    """A warning (numpy's, matplotlib's, POT's) as one stderr line."""
    print(f"warning: {_one_line(message)} ({category.__name__})", file=file or sys.stderr)


def exit_on_run_file_error(main):
    """Wraps a tool's `main`, the one error boundary of the tools: a
    RunFileError raised anywhere in it (a damaged history found long after
    `open_run`, an output the tool may not write) ends the program with exit
    status 1 and the one line `error: ...` on stderr; any other exception
    (a crafted file whose values a reader let through: text where numbers
    belong, NaN particles) with status 2 and one line naming the files given
    and the exception (MFT_TRACEBACK=1 shows the traceback instead); every
    warning is one line `warning: ...`."""
    @functools.wraps(main)
    def guarded(*args, **kwargs):
        import warnings
        shown = warnings.showwarning
        warnings.showwarning = _warning_line
        try:
            return main(*args, **kwargs)
        except RunFileError as e:
            sys.exit(f"error: {_one_line(e)}")
        except (KeyboardInterrupt, MemoryError) as e:
            sys.exit(f"error: {'interrupted' if isinstance(e, KeyboardInterrupt) else 'out of memory'}")
        except Exception as e:
            if os.environ.get("MFT_TRACEBACK"):
                raise
            argv = args[0] if args and isinstance(args[0], (list, tuple)) else sys.argv[1:]
            # the inputs: the files named on the command line, not as an option's value (-o F)
            files = list(dict.fromkeys(a for i, a in enumerate(argv) if isinstance(a, str) and os.path.isfile(a)
                                       and not (i and str(argv[i - 1]).startswith("-"))))
            where = f"{', '.join(files)}: " if files else ""
            print(f"error: {where}{type(e).__name__}: {_one_line(e) or 'no message'} (MFT_TRACEBACK=1 shows where)",
                  file=sys.stderr)
            sys.exit(2)
        finally:
            warnings.showwarning = shown
    return guarded


def _one_of(kind):
    """One particle of a species kind, as mft names it ('heads': 'head')."""
    kind = str(kind)
    return kind[:-1] if len(kind) > 1 and kind.endswith("s") else kind or "particle"


def _columns(a):
    """A targets array as (N, d_out)."""
    return a.reshape(a.shape[0], -1) if a.ndim != 2 else a


class Run:
    """An open mft run file: its configuration, data, snapshots and history."""

    def __init__(self, path):
        self.path = path
        why = h5checks.not_regular(path)
        if why:
            raise RunFileError(f"{path}: {why}")
        if not h5py.is_hdf5(path):
            raise RunFileError(f"{path}: not an HDF5 file")
        try:
            self.file = h5py.File(path, "r")
        except (OSError, IOError) as e:
            raise RunFileError(f"{path}: HDF5 cannot open it ({str(e).splitlines()[0]})") from None
        try:
            fmt = self._attr("", "format", "")
            if fmt != FORMAT:
                raise RunFileError(f"{path}: not an mft run file (format attribute {fmt!r}, expected {FORMAT!r})")
            for required, kind in (("config", "group"), ("data/tokens", "dataset"), ("data/targets", "dataset"),
                                   ("particles/step", "dataset"), ("particles/tau", "dataset")):
                if not self._has(required):
                    raise RunFileError(f"{path}: incomplete mft run file (no /{required})")
                self._object(required, kind)
        except RunFileError:
            self.file.close()
            raise

    # The file's objects and attributes through h5checks: RunFileError, one
    # line naming the object, for what h5py cannot open or read.
    def _has(self, name):
        return h5checks.has(self.file, self.path, name)

    def _object(self, name, kind=None):
        return h5checks.h5object(self.file, self.path, name, kind)

    def _members(self, group):
        return h5checks.members(self.file, self.path, group)

    def _attr(self, name, key, default=None):
        return h5checks.attribute(self.file, self.path, name, key, default)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        """One line: the file, its task and sizes, its snapshots and history
        rows ('damaged' in place of a count that cannot be read)."""
        if not self.file:
            return f"<mft.Run {self.path!r} (closed)>"
        try:
            cfg = self.config
        except RunFileError:
            cfg = {"data.task": "? (configuration damaged)"}
        sizes = ", ".join(f"{label}={cfg[key]}" for label, key in
                          (("N", "data.sequences"), ("M", "model.heads"), ("L", "model.slices"), ("d", "model.d"))
                          if key in cfg)
        try:
            steps = self.snapshot_steps
            snaps = f"{len(steps)} snapshots" + (f" (steps {steps[0]}..{steps[-1]})" if len(steps) else "")
        except RunFileError:
            snaps = "snapshots damaged"
        try:
            hist = self.history
            rows = "no history" if hist is None else f"{len(next(iter(hist.values()), ()))} history rows"
        except RunFileError:
            rows = "history damaged"
        task = cfg.get("data.task", "?")
        return f"<mft.Run {self.path!r}: task {task}, {sizes}; {snaps}, {rows}>"

    @property
    def config(self):
        """The resolved configuration: {'section.key': value}."""
        out = {}
        for k, v in h5checks.attributes(self.file, self.path, "config").items():
            if isinstance(v, np.ndarray) and v.shape == ():
                v = v.item()
            elif isinstance(v, np.generic):
                v = v.item()
            out[k] = v
        return out

    @property
    def tokens(self):
        return self._read("data/tokens")

    @property
    def targets(self):
        """y as (N, d_out); a one-dimensional /data/targets is one column."""
        return _columns(self._read("data/targets"))

    @property
    def test_tokens(self):
        """Held-out tokens (N_test, n, d), or None when the file has none."""
        return self._read("data/test_tokens") if self._has("data/test_tokens") else None

    @property
    def test_targets(self):
        """Held-out targets (N_test, d_out), or None when the file has none."""
        return _columns(self._read("data/test_targets")) if self._has("data/test_targets") else None

    @property
    def symbols(self):
        """A task of symbols: the symbols (N, n) int64 its tokens embed, or None."""
        return self._read("data/symbols") if self._has("data/symbols") else None

    @property
    def test_symbols(self):
        """The held-out sequences' symbols (N_test, n), or None."""
        return self._read("data/test_symbols") if self._has("data/test_symbols") else None

    @property
    def baselines(self):
        """{name: held-out risk} of the predictors in /baselines (a task of
        symbols' own, or the constant predictor of the loss: nats for the
        cross-entropy); empty when the file has none; the name of the
        reference is in baseline_reference."""
        if not self._has("baselines"):
            return {}
        return {name: float(self._read(f"baselines/{name}")[0]) for name in self._members("baselines")}

    @property
    def baseline_reference(self):
        """The predictor /history/baseline_ratio (and baseline_gap) is
        measured against, or None."""
        if not self._has("baselines"):
            return None
        return self._attr("baselines", "reference")

    @property
    def baseline_risk(self):
        """The reference baseline's held-out risk: /baselines' reference, or
        for a file written before every run had one, the zero predictor's
        |y|^2 / 2 over /data/test_targets under the squared loss; None
        without held-out data (or a reference)."""
        reference = self.baseline_reference
        if isinstance(reference, bytes):
            reference = reference.decode("utf-8", "replace")
        if reference:
            return self.baselines.get(reference)
        if self.config.get("loss.kind") == "squared" and self._has("data/test_targets"):
            y = self.test_targets
            if len(y):
                return float((np.asarray(y, dtype=float) ** 2).sum(axis=1).mean() / 2)
        return None

    def _read(self, name, rows=Ellipsis):
        """Rows `rows` (an index or a slice) of dataset /`name`; RunFileError
        when HDF5 cannot read them (a truncated file) or /`name` is no
        dataset."""
        ds = self._object(name, "dataset")
        try:
            return ds[rows]
        except h5checks.H5_ERRORS as e:
            raise RunFileError(f"{self.path}: /{name} cannot be read ({_one_line(e)})") from None

    def _row_counts(self, group, names=None):
        """{'/group/name': rows} of the datasets of /`group` (those in `names`
        when given); a dataset with no rows (a scalar) is damage."""
        out = {}
        for name, ds in self._members(group).items():
            if not isinstance(ds, h5py.Dataset) or (names is not None and name not in names):
                continue
            if ds.ndim == 0:
                raise RunFileError(f"{self.path}: damaged run file: /{group}/{name} is a scalar, "
                                   "not one row per snapshot")
            out[f"/{group}/{name}"] = ds.shape[0]
        return out

    @functools.cached_property
    def snapshot_count(self):
        """The number of complete snapshots: `/particles.complete`, which
        every /particles and /optimizer dataset must reach (rows past it are
        a snapshot cut short and never shown). Files written before the
        attribute give the common row count of /particles/step,
        /particles/tau and the datasets of `species`. RunFileError when the
        attribute is not a non-negative integer, when a dataset is shorter
        than it, or, without it, when those datasets differ in rows."""
        particles = self._row_counts("particles")
        optimizer = self._row_counts("optimizer") if self._has("optimizer") else {}
        complete = self._attr("particles", "complete")
        if complete is not None:
            value, complete = complete, _integer(complete)
            if complete is None or complete < 0:
                raise RunFileError(f"{self.path}: damaged run file: /particles.complete is "
                                   f"{value!r}, not a count of snapshots")
        else:
            counted = self._row_counts("particles", {"step", "tau", *self.species})
            if len(set(counted.values())) > 1:
                raise RunFileError(f"{self.path}: damaged run file: the /particles datasets differ in rows "
                                   f"and no /particles.complete says which are complete ({_by_rows(counted)})")
            complete = counted["/particles/step"]
        short = {name: rows for name, rows in {**particles, **optimizer}.items() if rows < complete}
        if short:
            raise RunFileError(f"{self.path}: damaged run file: {complete} complete snapshots, "
                               f"but {_by_rows(short)}")
        return complete

    def snapshot_row(self, index):
        """The row of complete snapshot `index` (0, 1, ...; negative counts
        back from the last complete one, -1 being it), or RunFileError
        naming the valid range."""
        n = self.snapshot_count
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise RunFileError(f"{self.path}: snapshot index {index!r} is not an integer")
        if not -n <= index < n:
            valid = f"0 to {n - 1}, or -{n} to -1 from the last" if n else "none: the file has no complete snapshot"
            raise RunFileError(f"{self.path}: no snapshot {index} (valid indices: {valid})")
        return int(index) % n

    @property
    def snapshot_steps(self):
        """The training step of each complete snapshot."""
        return self._read("particles/step", slice(0, self.snapshot_count))

    @property
    def snapshot_taus(self):
        """The training time tau of each complete snapshot."""
        return self._read("particles/tau", slice(0, self.snapshot_count))

    @property
    def species(self):
        """{particle dataset name: its kind} for the datasets of /particles
        with a `species` attribute (the kind it names), and for an untagged
        dataset named in SPECIES_KINDS (its kind there: files written before
        the attribute, or a dataset that lost it)."""
        datasets = {name: ds for name, ds in self._members("particles").items() if isinstance(ds, h5py.Dataset)}
        tagged = {name: self._attr(f"particles/{name}", "species") for name in datasets}
        kinds = {name: kind for name, kind in tagged.items() if kind is not None}
        for name in SPECIES:
            if name in datasets and name not in kinds:
                kinds[name] = SPECIES_KINDS[name]
        order = sorted(kinds, key=lambda n: (SPECIES.index(n) if n in SPECIES else len(SPECIES), n))
        return {name: kinds[name] for name in order}

    def require_species(self, *names):
        """RunFileError, one line, unless the file has every particle
        dataset in `names` (what a tool needs, e.g. Q, K, V)."""
        kinds = self.species
        missing = [name for name in names if name not in kinds]
        if missing:
            raise RunFileError(f"{self.path}: no particle dataset {', '.join(missing)} "
                               f"(the file has {', '.join(kinds) or 'none'})")

    def particles(self, index):
        """Complete snapshot `index` (see `snapshot_row`) as {'Q': (L, M,
        d_h, d), 'K': ..., 'V': (L, M, d, d)[, 'W1', 'W2', ...]}: every
        particle dataset that `species` lists."""
        row = self.snapshot_row(index)
        return {s: self._read("particles/" + s, row) for s in self.species}

    def optimizer_state(self, index):
        """The optimiser's state written with complete snapshot `index`, or
        None when the run keeps none (flow, sgd): {'t': int, 'm': {'Q': array
        like particles(index)['Q'], ...}, 'v': {...}} for every array `a` of
        /optimizer/a_<dataset>."""
        if not self._has("optimizer"):
            return None
        row = self.snapshot_row(index)
        g = self._members("optimizer")
        out = {"t": int(self._read("optimizer/t", row))} if "t" in g else {}
        for name in self.species:
            for key in g:
                if key.endswith("_" + name) and isinstance(g[key], h5py.Dataset):
                    out.setdefault(key[: -len(name) - 1], {})[name] = self._read(f"optimizer/{key}", row)
        return out

    def snapshot_index(self, step):
        """The row of the last complete snapshot of training step `step`."""
        steps = self.snapshot_steps
        rows = np.flatnonzero(steps == step)
        if rows.size == 0:
            shown = ", ".join(map(str, steps[:6])) + (f", ..., {steps[-1]}" if len(steps) > 6 else "")
            raise RunFileError(f"{self.path}: no particle snapshot of step {step} "
                               f"(snapshots at steps {shown or 'none'})")
        return int(rows[-1])

    @property
    def history(self):
        """Every dataset of /history as an array ('step', 'tau', 'risk',
        'objective', 'grad_norm', 'wall_time', and 'accuracy', 'test_risk',
        'test_accuracy', 'batch_risk', 'ntk_lambda_min', 'ntk_lambda_max' when
        the run wrote them), or None: the first `/history.complete` rows,
        which every dataset must reach (rows past it are cut short). Files
        written before the attribute must have columns of one length. The
        vector columns of a task of symbols (HISTORY_VECTORS: a row of L
        slices' scores, of n - 1 positions' losses) are (rows, length)
        arrays. RunFileError otherwise, and for a /history member that is
        neither."""
        if not self._has("history"):
            return None
        lengths = {}
        for name, ds in self._members("history").items():
            if not isinstance(ds, h5py.Dataset) or ds.ndim != (2 if name in HISTORY_VECTORS else 1):
                what = f"shape {ds.shape}" if isinstance(ds, h5py.Dataset) else "a group"
                raise RunFileError(f"{self.path}: damaged run file: /history/{name} is {what}, "
                                   "not one value per history row")
            lengths[name] = ds.shape[0]
        complete = self._attr("history", "complete")
        if complete is not None:
            rows = _integer(complete)
            if rows is None or rows < 0:
                raise RunFileError(f"{self.path}: damaged run file: /history.complete is "
                                   f"{complete!r}, not a count of rows")
            short = {f"/history/{name}": n for name, n in lengths.items() if n < rows}
            if short:
                raise RunFileError(f"{self.path}: damaged run file: /history.complete is {rows}, "
                                   f"but {_by_rows(short)}")
        else:
            if len(set(lengths.values())) > 1:
                raise RunFileError(f"{self.path}: ragged /history (columns of different lengths and no "
                                   f"/history.complete): {_by_rows({f'/history/{k}': n for k, n in lengths.items()})}")
            rows = next(iter(lengths.values()), 0)
        return {name: self._read("history/" + name, slice(0, rows)) for name in lengths}

    @property
    def end(self):
        """How the run's last start ended, from /history.end: "done",
        "stopped" (a signal or train.max_walltime), "diverged", or "running"
        (it still runs, or was killed); None for a file from before the
        attribute or without a history."""
        return self._history_text("end")

    @property
    def end_error(self):
        """A diverged run's error line (/history.end_error), or None."""
        return self._history_text("end_error")

    def _history_text(self, name):
        value = self._attr("history", name) if self._has("history") else None
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        return value if isinstance(value, str) else None

    def training_history(self, columns=("step", "tau", "risk", "objective"), hist=...):
        """`history` for a tool that needs a training run's: RunFileError
        when the file has no /history, no complete row, or lacks one of
        `columns`. `hist`: the file's `history` when the caller has read it
        already (it is read once)."""
        hist = self.history if hist is ... else hist
        if not hist or len(next(iter(hist.values()))) == 0:
            raise RunFileError(f"{self.path}: no /history (not a training run)")
        missing = [c for c in columns if c not in hist]
        if missing:
            raise RunFileError(f"{self.path}: /history has no {', '.join(missing)}")
        return hist

    def particles_xarray(self, name):
        """Particle dataset `name` ('Q', 'K', 'V', 'W1', ...; see `species`)
        over the complete snapshots as an xarray.DataArray with dims
        ("snapshot", "slice", "head", "row", "col") ("neuron" instead of
        "head" for the MLP's particles). `step` and `tau` are coordinates
        along "snapshot" with indexes of their own, so `.sel(step=200)` and
        `.sel(tau=2.0, method="nearest")` select snapshots by label and
        `.isel(snapshot=-1)` by row; `slice`, `head` (or `neuron`) count
        0, 1, ...; `row` and `col` index the particle's matrix.

        >>> run.particles_xarray("V").sel(step=200, slice=0).mean("head")  # doctest: +SKIP
        """
        return _by_step_and_tau(self._particles_xarray(name, ("row", "col")))

    def particles_dataset(self):
        """Every particle dataset of `species` in one xarray.Dataset sharing
        the "snapshot", "slice", "head" and "neuron" dimensions (with the
        step and tau indexes of `particles_xarray`); the matrix dimensions
        are named after the species ("Q_row", "Q_col", "V_row", ...), since
        Q (d_h x d) and V (d x d) differ in shape.

        >>> ds = run.particles_dataset()                                   # doctest: +SKIP
        >>> (ds.Q ** 2).sum(["Q_row", "Q_col"]).sel(step=0).mean()         # doctest: +SKIP
        """
        import xarray as xr

        arrays = [self._particles_xarray(name, (f"{name}_row", f"{name}_col")) for name in self.species]
        return _by_step_and_tau(xr.merge(arrays, combine_attrs="drop_conflicts").assign_attrs(file=self.path))

    def _particles_xarray(self, name, matrix_dims):
        import xarray as xr

        self.require_species(name)
        kinds = self.species
        values = self._read(f"particles/{name}", slice(0, self.snapshot_count))
        if values.ndim != 5:
            raise RunFileError(f"{self.path}: /particles/{name} has shape {values.shape}, "
                               "expected (snapshots, L, M, rows, cols)")
        steps, taus = self.snapshot_steps, self.snapshot_taus
        unit = _one_of(kinds[name])
        return xr.DataArray(
            values,
            dims=("snapshot", "slice", unit) + tuple(matrix_dims),
            coords={"step": ("snapshot", steps), "tau": ("snapshot", taus),
                    "slice": np.arange(values.shape[1]), unit: np.arange(values.shape[2])},
            name=name,
            attrs={"species": kinds[name], "file": self.path},
        )

    def history_frame(self):
        """/history as a pandas.DataFrame, one row per complete history row
        and one column per dataset, in the file's order (/history.columns;
        for older files step, tau, risk, objective, grad_norm, wall_time
        first), then any others alphabetically; None when the file has no
        /history; RunFileError as for `history`."""
        hist = self.history
        if hist is None:
            return None
        import pandas as pd

        order = self._attr("history", "columns", "")
        if not isinstance(order, str):
            raise RunFileError(f"{self.path}: the attribute /history.columns is {type(order).__name__}, not the "
                               "comma-separated column names (text)")
        first = [k for k in (order.split(",") if order else HISTORY_COLUMNS) if k in hist]
        columns = [k for k in first + sorted(k for k in hist if k not in first) if k not in HISTORY_VECTORS]
        return pd.DataFrame({k: hist[k] for k in columns}, columns=columns)

    def history_vectors(self):
        """The vector columns of /history (HISTORY_VECTORS) the file has, each
        an xarray.DataArray (step, slice) or (step, position), position t
        = 1 .. n - 1 the one that predicts s_{t+1}; {} when it has none."""
        hist = self.history
        if hist is None:
            return {}
        import xarray as xr

        out = {}
        for name, unit in HISTORY_VECTORS.items():
            if name in hist:
                values = hist[name]
                axis = np.arange(values.shape[1]) + (1 if unit == "position" else 0)
                out[name] = xr.DataArray(values, dims=("step", unit), coords={"step": hist["step"], unit: axis},
                                         name=name)
        return out

    def forward_dataset(self):
        """/forward of an `mft forward` run as an xarray.Dataset (dims
        sequence, token, coordinate, depth, output; risk and the other
        results as attributes): `mft.outputs.forward_dataset`."""
        from . import outputs
        return outputs.forward_dataset(self)

    def ntk_dataset(self):
        """/ntk of an `mft ntk` run as an xarray.Dataset (gram, eigenvalues,
        the CGF test; lambda_min, lambda_max, ... as attributes):
        `mft.outputs.ntk_dataset`."""
        from . import outputs
        return outputs.ntk_dataset(self)

    def close(self):
        self.file.close()


def _by_step_and_tau(labelled):
    """An xarray object whose `step` and `tau` coordinates (along
    "snapshot") get indexes: `.sel(step=s)` selects by step. xarray before
    2022.10 has no set_xindex: there select with
    `.swap_dims(snapshot="step").sel(step=s)`."""
    if not hasattr(labelled, "set_xindex"):
        return labelled
    return labelled.set_xindex("step").set_xindex("tau")


def open_run(path):
    """Opens a run file: a `Run`, also a context manager (`with open_run(p)
    as run:` closes it). RunFileError, one line naming the file, when it is
    missing, not HDF5 or not an mft/1 run; a tool's `main` wrapped in
    `exit_on_run_file_error` turns that into `error: ...` and exit status 1.

    >>> run = open_run("runs/icl.h5"); run          # doctest: +SKIP
    <mft.Run 'runs/icl.h5': task icl-linear, N=256, M=16, L=4, d=6; 11 snapshots (steps 0..200), 11 history rows>
    """
    return Run(os.fspath(path))


# Several runs as one Dataset, their differing keys as dimensions (mft.runs).
from .runs import open_runs, run_labels  # noqa: E402, F401

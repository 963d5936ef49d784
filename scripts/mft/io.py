"""The one reader of mft's HDF5 run files (schema mft/1, see FORMAT.md).

Every analysis tool opens runs through `open_run`, which refuses a file
that is not an mft/1 run with a one-line error. Besides plain NumPy arrays,
a `Run` gives its particles as labelled arrays (`particles_xarray`, needs
xarray) and its history as a table (`history_frame`, needs pandas); those
two libraries are imported only when these methods are called.
"""
import os
import sys

import h5py
import numpy as np

FORMAT = "mft/1"
# Particle datasets of files whose /particles datasets carry no `species`
# attribute, in the order the reader lists them; tagged datasets not named
# here follow in alphabetical order.
SPECIES = ("Q", "K", "V", "W1", "W2")
SPECIES_KINDS = {"Q": "heads", "K": "heads", "V": "heads", "W1": "neurons", "W2": "neurons"}
# The first columns of `Run.history_frame`, in this order, when present.
HISTORY_COLUMNS = ("step", "tau", "risk", "objective", "grad_norm", "wall_time")


class RunFileError(Exception):
    """A file that is missing, not HDF5, or not an mft/1 run."""


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def _columns(a):
    """A targets array as (N, d_out)."""
    return a.reshape(a.shape[0], -1) if a.ndim != 2 else a


class Run:
    """An open mft run file: its configuration, data, snapshots and history."""

    def __init__(self, path):
        self.path = path
        if not os.path.isfile(path):
            raise RunFileError(f"{path}: no such file")
        if not h5py.is_hdf5(path):
            raise RunFileError(f"{path}: not an HDF5 file")
        try:
            self.file = h5py.File(path, "r")
        except (OSError, IOError) as e:
            raise RunFileError(f"{path}: HDF5 cannot open it ({str(e).splitlines()[0]})") from None
        fmt = _text(self.file.attrs.get("format", ""))
        if fmt != FORMAT:
            raise RunFileError(f"{path}: not an mft run file (format attribute {fmt!r}, expected {FORMAT!r})")
        for required in ("config", "data/tokens", "data/targets", "particles/step"):
            if required not in self.file:
                raise RunFileError(f"{path}: incomplete mft run file (no /{required})")

    @property
    def config(self):
        """The resolved configuration: {'section.key': value}."""
        out = {}
        for k, v in self.file["config"].attrs.items():
            v = _text(v)
            if isinstance(v, np.ndarray) and v.shape == ():
                v = v.item()
            elif isinstance(v, np.generic):
                v = v.item()
            out[k] = v
        return out

    @property
    def tokens(self):
        return self.file["data/tokens"][...]

    @property
    def targets(self):
        """y as (N, d_out); a one-dimensional /data/targets is one column."""
        return _columns(self.file["data/targets"][...])

    @property
    def test_tokens(self):
        """Held-out tokens (N_test, n, d), or None when the file has none."""
        return self.file["data/test_tokens"][...] if "data/test_tokens" in self.file else None

    @property
    def test_targets(self):
        """Held-out targets (N_test, d_out), or None when the file has none."""
        return _columns(self.file["data/test_targets"][...]) if "data/test_targets" in self.file else None

    @property
    def snapshot_steps(self):
        return self.file["particles/step"][...]

    @property
    def snapshot_taus(self):
        return self.file["particles/tau"][...]

    @property
    def species(self):
        """{particle dataset name: 'heads' or 'neurons'} for the datasets of
        /particles with a `species` attribute; files without the attribute
        give those of Q, K, V, W1, W2 that are present."""
        g = self.file["particles"]
        tagged = {name: _text(ds.attrs["species"]) for name, ds in g.items()
                  if isinstance(ds, h5py.Dataset) and "species" in ds.attrs}
        if not tagged:
            tagged = {name: SPECIES_KINDS[name] for name in SPECIES if name in g}
        order = sorted(tagged, key=lambda n: (SPECIES.index(n) if n in SPECIES else len(SPECIES), n))
        return {name: tagged[name] for name in order}

    def particles(self, index):
        """Snapshot `index` (a row of /particles; negative counts from the end)
        as {'Q': (L, M, d_h, d), 'K': ..., 'V': (L, M, d, d)[, 'W1', 'W2', ...]}:
        every particle dataset that `species` lists."""
        g = self.file["particles"]
        return {s: g[s][index] for s in self.species}

    def optimizer_state(self, index):
        """The optimiser's state written with snapshot `index` (a row of
        /particles), or None when the run keeps none (flow, sgd): {'t': int,
        'm': {'Q': array like particles(index)['Q'], ...}, 'v': {...}} for
        every array `a` of /optimizer/a_<dataset>."""
        if "optimizer" not in self.file:
            return None
        g = self.file["optimizer"]
        out = {"t": int(g["t"][index])} if "t" in g else {}
        for name in self.species:
            for key in g:
                if key.endswith("_" + name) and isinstance(g[key], h5py.Dataset):
                    out.setdefault(key[: -len(name) - 1], {})[name] = g[key][index]
        return out

    def snapshot_index(self, step):
        rows = np.flatnonzero(self.snapshot_steps == step)
        if rows.size == 0:
            raise RunFileError(f"{self.path}: no particle snapshot of step {step}")
        return int(rows[-1])

    @property
    def history(self):
        """Every dataset of /history as an array ('step', 'tau', 'risk',
        'objective', 'grad_norm', 'wall_time', and 'accuracy', 'test_risk',
        'test_accuracy', 'batch_risk', 'ntk_lambda_min', 'ntk_lambda_max' when
        the run wrote them), or None."""
        if "history" not in self.file:
            return None
        return {k: v[...] for k, v in self.file["history"].items()}

    def particles_xarray(self, name):
        """Particle dataset `name` ('Q', 'K', 'V', 'W1', ...; see `species`)
        over all snapshots as an xarray.DataArray with dims ("snapshot",
        "slice", "head", "row", "col") ("neuron" instead of "head" for the
        MLP's particles): coordinates `step` and `tau` along "snapshot" (the
        rows of /particles/step and /particles/tau; "snapshot" itself has no
        index, select rows with `.isel(snapshot=k)` or swap in step with
        `.swap_dims(snapshot="step")`), and `slice`, `head` (or `neuron`) as
        0, 1, ...; `row` and `col` index the particle's matrix."""
        import xarray as xr

        kinds = self.species
        if name not in kinds:
            raise RunFileError(f"{self.path}: no particle dataset {name!r} (the file has {', '.join(kinds) or 'none'})")
        values = self.file["particles"][name][...]
        if values.ndim != 5:
            raise RunFileError(f"{self.path}: /particles/{name} has shape {values.shape}, "
                               "expected (snapshots, L, M, rows, cols)")
        steps, taus = self.snapshot_steps, self.snapshot_taus
        if not len(steps) == len(taus) == values.shape[0]:
            raise RunFileError(f"{self.path}: /particles/{name} has {values.shape[0]} snapshots, "
                               f"/particles/step {len(steps)} and /particles/tau {len(taus)}")
        unit = {"heads": "head", "neurons": "neuron"}.get(kinds[name], "particle")
        return xr.DataArray(
            values,
            dims=("snapshot", "slice", unit, "row", "col"),
            coords={"step": ("snapshot", steps), "tau": ("snapshot", taus),
                    "slice": np.arange(values.shape[1]), unit: np.arange(values.shape[2])},
            name=name,
            attrs={"species": kinds[name], "file": self.path},
        )

    def history_frame(self):
        """/history as a pandas.DataFrame, one row per history row and one
        column per dataset (step, tau, risk, objective, grad_norm, wall_time
        first, then the others the run wrote, alphabetically), or None when
        the file has no /history."""
        hist = self.history
        if hist is None:
            return None
        import pandas as pd

        first = [k for k in HISTORY_COLUMNS if k in hist]
        columns = first + sorted(k for k in hist if k not in first)
        return pd.DataFrame({k: hist[k] for k in columns}, columns=columns)

    def close(self):
        self.file.close()


def open_run(path):
    """Opens a run file or exits with a one-line error."""
    try:
        return Run(path)
    except RunFileError as e:
        sys.exit(f"error: {e}")

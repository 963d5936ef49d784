"""The results of `mft forward` (/forward) and `mft ntk` (/ntk) as labelled
arrays (docs/FORMAT.md, "/forward (mft forward) and /ntk (mft ntk)").

`forward_dataset(run)` and `ntk_dataset(run)` take an open `mft.io.Run`
(also reached as `run.forward_dataset()` and `run.ntk_dataset()`) and return
one xarray.Dataset each, its scalar results as attributes. Datasets and
attributes that newer files add (held-out predictions, accuracies, the
kernel's rate bound) are read when the file has them and absent otherwise,
so files of every version read alike.

    >>> with mft.open_run("runs/fwd.h5") as run:                  # doctest: +SKIP
    ...     fwd = run.forward_dataset()
    >>> fwd.attrs["risk"], fwd.predictions.sel(output=0)           # doctest: +SKIP
    >>> fwd.tokens_depth.sel(depth=0.5, sequence=3)                # doctest: +SKIP
"""
import numpy as np

from .h5checks import RunFileError

# The scalar attributes of each group, in the order they are listed; any
# other numeric or text attribute a file has follows them.
FORWARD_ATTRIBUTES = ("risk", "norm_drift", "test_risk", "accuracy", "test_accuracy")
NTK_ATTRIBUTES = ("part", "snapshot", "lambda_min", "lambda_max", "kv_lambda_min", "kv_positive_definite",
                  "rate_bound", "all_lambda_max", "euler_dtau_max", "cgf_margin", "cgf_margin_population")


def _scalar(value):
    """An attribute as a Python scalar (int, float, str); a one-element
    array as its element; a longer array unchanged."""
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(())[()]
    return value.item() if isinstance(value, np.generic) else value


def group_attributes(run, group, order=()):
    """The attributes of /`group` as {name: Python scalar}, those named in
    `order` first; RunFileError for one that cannot be read."""
    from . import h5checks

    found = {k: _scalar(v) for k, v in h5checks.attributes(run.file, run.path, group).items()}
    return {**{k: found[k] for k in order if k in found}, **{k: v for k, v in found.items() if k not in order}}


def _need(run, group, command):
    if not run._has(group):
        raise RunFileError(f"{run.path}: no /{group} (not a run of {command})")


def _array(run, name, ndim):
    """Dataset /`name`, which must have `ndim` dimensions."""
    values = run._read(name)
    if values.ndim != ndim:
        raise RunFileError(f"{run.path}: damaged run file: /{name} has shape {values.shape}, "
                           f"expected {ndim} dimensions")
    return values


def _agree(run, sizes):
    """RunFileError unless every dataset gives a dimension the same size:
    sizes is [(dim, size, '/dataset')]."""
    seen = {}
    for dim, size, name in sizes:
        if dim in seen and seen[dim][0] != size:
            raise RunFileError(f"{run.path}: damaged run file: {seen[dim][1]} has {seen[dim][0]} {dim} "
                               f"entries but {name} has {size}")
        seen.setdefault(dim, (size, name))


def forward_dataset(run):
    """/forward of an `mft forward` run as an xarray.Dataset:

    - tokens_final (sequence, token, coordinate): X(1);
    - predictions (sequence, output): the readout y-hat, with `targets`
      (sequence, output) from /data/targets beside it;
    - tokens_depth (sequence, depth, token, coordinate), with the depth s of
      each row as the coordinate `depth` (`.sel(depth=0.5)`), when the run
      wrote it (forward.tokens_depth);
    - test_predictions (test_sequence, output) and test_targets, when the
      file has held-out predictions.

    Attributes: risk, and when the file has them norm_drift, test_risk,
    accuracy, test_accuracy (any further /forward attribute follows), and
    `file`. RunFileError, one line, for a file without /forward or whose
    datasets disagree in their sizes."""
    import xarray as xr

    _need(run, "forward", "mft forward")
    final = _array(run, "forward/tokens_final", 3)
    predictions = _array(run, "forward/predictions", 2)
    targets = run.targets
    sizes = [("sequence", final.shape[0], "/forward/tokens_final"),
             ("sequence", predictions.shape[0], "/forward/predictions"),
             ("output", predictions.shape[1], "/forward/predictions"),
             ("sequence", targets.shape[0], "/data/targets"), ("output", targets.shape[1], "/data/targets")]
    variables = {
        "tokens_final": (("sequence", "token", "coordinate"), final),
        "predictions": (("sequence", "output"), predictions),
        "targets": (("sequence", "output"), targets),
    }
    coords = {"sequence": np.arange(final.shape[0]), "token": np.arange(final.shape[1]),
              "coordinate": np.arange(final.shape[2]), "output": np.arange(predictions.shape[1])}
    if run._has("forward/tokens_depth"):
        depth_tokens = _array(run, "forward/tokens_depth", 4)
        depth = _array(run, "forward/depth", 1) if run._has("forward/depth") else None
        if depth is None or depth.shape[0] != depth_tokens.shape[1]:
            raise RunFileError(f"{run.path}: damaged run file: /forward/tokens_depth has {depth_tokens.shape[1]} "
                               f"depth rows but /forward/depth "
                               + ("is missing" if depth is None else f"has {depth.shape[0]}"))
        sizes += [("sequence", depth_tokens.shape[0], "/forward/tokens_depth"),
                  ("token", depth_tokens.shape[2], "/forward/tokens_depth"),
                  ("token", final.shape[1], "/forward/tokens_final"),
                  ("coordinate", depth_tokens.shape[3], "/forward/tokens_depth"),
                  ("coordinate", final.shape[2], "/forward/tokens_final")]
        variables["tokens_depth"] = (("sequence", "depth", "token", "coordinate"), depth_tokens)
        coords["depth"] = depth
    if run._has("forward/test_predictions"):
        test = _array(run, "forward/test_predictions", 2)
        sizes.append(("output", test.shape[1], "/forward/test_predictions"))
        variables["test_predictions"] = (("test_sequence", "output"), test)
        coords["test_sequence"] = np.arange(test.shape[0])
        test_targets = run.test_targets
        if test_targets is not None:
            sizes += [("test_sequence", test.shape[0], "/forward/test_predictions"),
                      ("test_sequence", test_targets.shape[0], "/data/test_targets"),
                      ("output", test_targets.shape[1], "/data/test_targets")]
            variables["test_targets"] = (("test_sequence", "output"), test_targets)
    _agree(run, sizes)
    attrs = group_attributes(run, "forward", FORWARD_ATTRIBUTES)
    attrs["file"] = run.path
    return xr.Dataset(variables, coords=coords, attrs=attrs)


def ntk_dataset(run):
    """/ntk of an `mft ntk` run as an xarray.Dataset:

    - gram (row, col): K = (M L) J J^T, N d_out rows; row r is output
      r % d_out of sequence r // d_out, given as the coordinates
      row_sequence, row_output (and col_sequence, col_output);
    - eigenvalues (eigenvalue): its eigenvalues, ascending;
    - with --cgf: cgf_singular_values (singular_value), descending, and
      cgf_points (point, coordinate), the points z.

    Attributes: part, snapshot (the training step of the particles),
    lambda_min, lambda_max and, when the file has them, kv_lambda_min,
    kv_positive_definite (1 or 0), rate_bound, all_lambda_max,
    euler_dtau_max, cgf_margin, cgf_margin_population (any further /ntk
    attribute follows), and `file`. RunFileError, one line, for a file
    without /ntk or whose Gram is not square."""
    import xarray as xr

    _need(run, "ntk", "mft ntk")
    gram = _array(run, "ntk/gram", 2)
    eigenvalues = _array(run, "ntk/eigenvalues", 1)
    rows = gram.shape[0]
    if gram.shape[1] != rows or eigenvalues.shape[0] != rows:
        raise RunFileError(f"{run.path}: damaged run file: /ntk/gram has shape {gram.shape} and "
                           f"/ntk/eigenvalues {eigenvalues.shape}, expected (n, n) and (n,)")
    d_out = run.targets.shape[1]
    if d_out == 0 or rows % d_out:
        raise RunFileError(f"{run.path}: damaged run file: /ntk/gram has {rows} rows, "
                           f"not N d_out with d_out = {d_out}")
    index = np.arange(rows)
    coords = {"row": index, "col": index, "eigenvalue": index,
              "row_sequence": ("row", index // d_out), "row_output": ("row", index % d_out),
              "col_sequence": ("col", index // d_out), "col_output": ("col", index % d_out)}
    variables = {"gram": (("row", "col"), gram), "eigenvalues": (("eigenvalue",), eigenvalues)}
    if run._has("ntk/cgf_singular_values"):
        values = _array(run, "ntk/cgf_singular_values", 1)
        variables["cgf_singular_values"] = (("singular_value",), values)
        coords["singular_value"] = np.arange(values.shape[0])
    if run._has("ntk/cgf_points"):
        points = _array(run, "ntk/cgf_points", 2)
        variables["cgf_points"] = (("point", "coordinate"), points)
        coords["point"] = np.arange(points.shape[0])
        coords["coordinate"] = np.arange(points.shape[1])
    attrs = group_attributes(run, "ntk", NTK_ATTRIBUTES)
    attrs["file"] = run.path
    return xr.Dataset(variables, coords=coords, attrs=attrs)


def measures(run):
    """The scalar results of a run's /forward or /ntk group as one flat
    {name: number}: the numeric attributes of /forward (risk, norm_drift,
    ...) and of /ntk (lambda_min, ..., snapshot); text attributes (/ntk's
    part) left out. Empty for a training run."""
    out = {}
    for group in ("forward", "ntk"):
        if run._has(group):
            for name, value in group_attributes(run, group).items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    out[name] = value
    return out

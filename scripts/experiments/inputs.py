"""The files a driver writes for mft to read (data files, given
particles), each named after its content, so that a run that reads one is
reused only while what it read stays the same."""
from pathlib import Path

import numpy as np


def content_file(folder, stem, datasets):
    """Writes {name: array} as the datasets of folder/STEM-HASH.h5, the hash
    of their names, shapes and values, unless that file exists, and returns
    its path: a run that reads it is reused only while what it read stays
    the same. Written under a hidden name, then renamed."""
    import hashlib
    import h5py
    arrays = {k: np.ascontiguousarray(v, float) for k, v in sorted(datasets.items())}
    digest = hashlib.sha256()
    for k, a in arrays.items():
        digest.update(k.encode() + repr(a.shape).encode())
        digest.update(a.tobytes())
    path = Path(folder) / f"{stem}-{digest.hexdigest()[:12]}.h5"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name("." + path.name + ".partial")
        with h5py.File(partial, "w") as f:
            for k, a in arrays.items():
                f.create_dataset(k, data=a)
        partial.rename(path)
    return path


def data_file(folder, stem, tokens, targets):
    """An mft data file of tokens (N, n, d) and targets (N, d_out), named
    after its content (content_file)."""
    return content_file(folder, stem, {"data/tokens": tokens, "data/targets": targets})


def particle_file(folder, stem, matrices):
    """Given particles ({'Q': array (L, M, d_h, d), ...}) as one snapshot of
    a file mft reads with init.file (/particles/<name> shaped (1, L, M, rows,
    cols)), named after its content (content_file)."""
    return content_file(folder, stem, {"particles/" + k: np.asarray(v, float)[None] for k, v in matrices.items()})


def residual_scaled_data(forward, folder, stem, scale):
    """The data file (data_file) of the tokens of `mft forward` run file
    `forward` with the targets yhat(0) + scale (y - yhat(0)), yhat(0) its
    predictions: the initial residual times `scale`, so R(0) times scale^2.

    With scale = 1/alpha this is the lazy control of the squared loss
    (docs/MODEL.md): training on these targets is exactly training the
    prediction yhat(0) + alpha (yhat - yhat(0)) on y with the risk divided
    by alpha^2, whose risk is alpha^2 times the one mft reports."""
    import h5py
    with h5py.File(forward, "r") as f:
        tokens, start = f["data/tokens"][()], f["forward/predictions"][()]
        targets = start + scale * (f["data/targets"][()] - start)
    return data_file(folder, stem, tokens, targets)

"""The linearised stable Euler steps of a width_depth.py run at its end:
the squared loss's and the cross-entropy's, from `mft ntk` on blocks of
the training images. Apart from the driver so that its design, runs and
criteria fit one file."""
import numpy as np

import common
from common import Run


def cross_entropy_curvature(gram, logits):
    """lambda_max(H^1/2 K H^1/2) of one block: K its kernel ((M L) J J^T,
    rows (image, class)), H the cross-entropy's Hessian in the logits,
    diag(p_i) - p_i p_i^T for each image (p_i its softmax). The linearised
    flow of the logits is dz/dtau = -K H z / N, so Euler steps are stable
    while dtau < 2 N / lambda_max: the squared loss's bound with H in place
    of the identity (H <= 1/2, and near 0 for an image classified with a
    wide margin)."""
    from scipy.linalg import eigh
    n, k = logits.shape
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    w, U = np.linalg.eigh(np.einsum("ia,ab->iab", p, np.eye(k)) - np.einsum("ia,ib->iab", p, p))
    root = np.einsum("iab,ib,icb->iac", U, np.sqrt(np.clip(w, 0, None)), U)
    A = np.einsum("iab,ibjc,jdc->iajd", root, gram.reshape(n, k, n, k), root, optimize=True).reshape(n * k, n * k)
    return float(eigh((A + A.T) / 2, eigvals_only=True, subset_by_index=[n * k - 1, n * k - 1])[0])


def stable_steps(name, train_path, logits, blocks, readout, options, folder):
    """The linearised stable Euler steps of run `name` at its end (the
    squared loss's, the cross-entropy's) and the file that keeps them. The
    1,150 images' kernel is too large to diagonalise often (1 GiB, minutes),
    so mft ntk computes it in blocks: with J_b block b's rows, J^T J =
    sum_b J_b^T J_b, so lambda_max(K) <= sum_b lambda_max(K_b) (the same
    with H) and 2 N / sum_b is a lower bound on the step. The blocks' files
    (29 MB each) are removed once read (and so always rerun); their versions
    and earliest creation stay in the kept file."""
    import h5py
    with h5py.File(train_path, "r") as f:
        M, L = (int(f["config"].attrs[k]) for k in ("model.heads", "model.slices"))
    paths = common.execute("width_depth", [Run(f"{name}-kernel-b{b}", {
        "data.task": "file", "data.file": str(block), "init.file": str(train_path), "init.snapshot": -1, **readout,
        "model.heads": M, "model.slices": L, "ntk.part": "all"}, command="ntk") for b, block in enumerate(blocks)],
        options)
    squared = curvature = 0.0
    for b in range(len(blocks)):
        with h5py.File(paths[f"{name}-kernel-b{b}"], "r") as f:
            squared += float(f["ntk"].attrs["all_lambda_max"])
            curvature += cross_entropy_curvature(f["ntk/gram"][()], logits[b::len(blocks)])
    kept = folder / f"{name}-stable.h5"
    with h5py.File(kept, "w") as f:
        f.attrs.update(common.provenance(paths.values()))
        f["steps"] = steps = (2 * len(logits) / squared, 2 * len(logits) / curvature)
    for path in paths.values():
        path.unlink()
    return steps, kept

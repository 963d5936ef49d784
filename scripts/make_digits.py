#!/usr/bin/env python3
"""Writes the 8x8 handwritten digits as an mft data file of token sequences.

Source: sklearn.datasets.load_digits(), 1,797 grey images of 8x8 pixels with
values 0..16 and 10 classes (the digits 0-9); Debian's python3-sklearn ships
the data, nothing is downloaded.

Tokens. Pixels are divided by 16 (values in [0, 1]). Each image is cut into
4 patches of 4x4 pixels, in the order top-left, top-right, bottom-left,
bottom-right; a patch becomes one token: its 16 pixels row by row, followed
by a one-hot of its position (4 values). So a sequence has n = 4 tokens of
d = 20 coordinates, and its target is the one-hot of its class (d_out = 10).

Split. Stratified and fixed by --seed: for every class, its images (in the
order of the source) are permuted by numpy.random.default_rng(seed) and the
first round(test_share * count) go to the test split, the rest to training.
Each split is then put in an order drawn from the same generator, so its
first K sequences (--train-size / --test-size) are a random subset. The
same seed and share give the same files on any machine with this NumPy.

Output (HDF5, all float64):
  /data/tokens       (N_train, 4, 20)    /data/targets       (N_train, 10)
  /data/test_tokens  (N_test, 4, 20)     /data/test_targets  (N_test, 10)
  root attributes: source, test_share, seed, and train_size, test_size,
  classes, layout (a one-line description of the tokens).

Use it with `--data.task file --data.file digits.h5 --model.d 20
--readout.dim 10 --loss.kind cross-entropy`.

  python3 scripts/make_digits.py [--output digits.h5] [--test-share 0.2] [--seed 0]
                                          [--train-size K] [--test-size K] [--force]
"""
import argparse
import os
import sys

from mft.tool_python import analysis_python

analysis_python()  # a python3 without numpy runs this again under the one scripts/env.sh finds
import numpy as np  # noqa: E402

SOURCE = "sklearn.datasets.load_digits (UCI optical recognition of handwritten digits, 8x8)"
LAYOUT = ("4 tokens per image: 4x4 patches top-left, top-right, bottom-left, bottom-right; "
          "token = 16 pixels / 16 row by row + one-hot of the patch position (4)")
CLASSES = 10
PATCH = 4


def load_images():
    """(images (1797, 8, 8) in [0, 16], labels (1797,)) or a one-line exit."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit("error: scikit-learn is missing: install python3-sklearn (scripts/install-deps.sh)")
    digits = load_digits()
    return np.asarray(digits.images, dtype=float), np.asarray(digits.target, dtype=int)


def tokenize(images):
    """(N, 8, 8) pixels in [0, 16] -> (N, 4, 20) tokens."""
    N = images.shape[0]
    scaled = images / 16.0
    tokens = np.zeros((N, 4, PATCH * PATCH + 4))
    corners = [(0, 0), (0, PATCH), (PATCH, 0), (PATCH, PATCH)]
    for t, (r, c) in enumerate(corners):
        tokens[:, t, :PATCH * PATCH] = scaled[:, r:r + PATCH, c:c + PATCH].reshape(N, -1)
        tokens[:, t, PATCH * PATCH + t] = 1.0
    return tokens


def one_hot(labels):
    out = np.zeros((labels.size, CLASSES))
    out[np.arange(labels.size), labels] = 1.0
    return out


def split(labels, test_share, seed):
    """(train indices, test indices): stratified by class, each in a seeded order."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in range(CLASSES):
        members = rng.permutation(np.flatnonzero(labels == c))
        k = int(round(test_share * members.size))
        test.append(members[:k])
        train.append(members[k:])
    train, test = np.concatenate(train), np.concatenate(test)
    return train[rng.permutation(train.size)], test[rng.permutation(test.size)]


def take(indices, size, option):
    if size is None:
        return indices
    if not 1 <= size <= indices.size:
        sys.exit(f"error: {option} {size}: the split has {indices.size} sequences (give 1..{indices.size})")
    return indices[:size]


def counts(labels):
    return " ".join(f"{c}:{n}" for c, n in enumerate(np.bincount(labels, minlength=CLASSES)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default="digits.h5", help="HDF5 file to write (default digits.h5)")
    parser.add_argument("--test-share", type=float, default=0.2,
                        help="share of every class held out for testing, in (0, 1) (default 0.2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the split and of the orders (default 0)")
    parser.add_argument("--train-size", type=int, metavar="K", help="keep only the first K training sequences")
    parser.add_argument("--test-size", type=int, metavar="K", help="keep only the first K test sequences")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output file")
    args = parser.parse_args()

    if not 0.0 < args.test_share < 1.0:
        sys.exit(f"error: --test-share {args.test_share}: give a share in (0, 1)")
    if args.seed < 0:
        sys.exit(f"error: --seed {args.seed}: give a seed >= 0")
    if os.path.isdir(args.output):
        sys.exit(f"error: {args.output} is a directory")
    if os.path.exists(args.output) and not args.force:
        sys.exit(f"error: {args.output} exists (give --force to overwrite it)")

    images, labels = load_images()
    tokens, targets = tokenize(images), one_hot(labels)
    train, test = split(labels, args.test_share, args.seed)
    train = take(train, args.train_size, "--train-size")
    test = take(test, args.test_size, "--test-size")

    import h5py
    with h5py.File(args.output, "w") as f:
        f.attrs["source"] = SOURCE
        f.attrs["test_share"] = float(args.test_share)
        f.attrs["seed"] = int(args.seed)
        f.attrs["train_size"] = int(train.size)
        f.attrs["test_size"] = int(test.size)
        f.attrs["classes"] = CLASSES
        f.attrs["layout"] = LAYOUT
        g = f.create_group("data")
        g.create_dataset("tokens", data=tokens[train])
        g.create_dataset("targets", data=targets[train])
        g.create_dataset("test_tokens", data=tokens[test])
        g.create_dataset("test_targets", data=targets[test])
    print(f"wrote {args.output}: {train.size} training and {test.size} test sequences of 4 tokens x 20, "
          f"10 classes; training classes {counts(labels[train])}; test classes {counts(labels[test])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes an mft data file of sequence pairs that only the token order tells
apart: the counterexample to injectivity without a causal mask.

Each pair p draws n tokens x_1..x_n from N(0, I_d). Its first sequence is
x_1..x_n; its second is the same tokens with x_1..x_{n-1} put in another
order (a random permutation, never the identity) and x_n kept last. The
targets are c_p + gap and c_p - gap, with c_p from N(0, 1/4).

Why: without a mask, attention is permutation-equivariant, so the last
token's state after any depth (and a query readout of it) is the same for
both sequences of a pair. No such model separates them: the best it can do
is predict the pair's mean, and the risk R = (1/(2N)) sum |yhat - y|^2 cannot
fall below irreducible_risk() (gap^2 / 2 with these targets). With the
causal mask token i sees x_1..x_i only, so the order changes the tokens the
last one attends to after the first slice, and the pair can be fitted.

Output (HDF5, float64): /data/tokens (2P, n, d), /data/targets (2P, 1);
root attributes source, pairs, tokens, dim, gap, seed. Use it with
`--data.task file --data.file pairs.h5` (the query readout reads the last
coordinate of the last token).

  python3 scripts/make_permutation_pairs.py [--output pairs.h5] [--pairs 4] [--tokens 6]
                                            [--dim 4] [--gap 0.5] [--seed 0] [--force]
"""
import argparse
import os
import sys

from mft.tool_python import analysis_python

analysis_python()  # a python3 without numpy runs this again under the one scripts/env.sh finds
import numpy as np  # noqa: E402

SOURCE = "mft permutation pairs: same tokens, same last token, another order, other targets"


def permutation_pairs(pairs, tokens, dim, gap, seed):
    """(tokens (2P, n, d), targets (2P, 1)): sequences 2p and 2p+1 are pair p."""
    if tokens < 3:
        raise ValueError("a pair needs n >= 3 tokens: two to reorder and the last one")
    rng = np.random.default_rng(seed)
    x = np.empty((2 * pairs, tokens, dim))
    y = np.empty((2 * pairs, 1))
    for p in range(pairs):
        first = rng.standard_normal((tokens, dim))
        order = rng.permutation(tokens - 1)
        if np.array_equal(order, np.arange(tokens - 1)):
            order = np.roll(order, 1)
        second = np.vstack([first[order], first[-1:]])
        centre = 0.5 * rng.standard_normal()
        x[2 * p], x[2 * p + 1] = first, second
        y[2 * p], y[2 * p + 1] = centre + gap, centre - gap
    return x, y


def indistinguishable_groups(tokens):
    """A label per sequence: equal labels for sequences with the same last
    token and the same other tokens in any order, which no permutation-
    equivariant model with a last-token readout can tell apart."""
    keys = {}
    labels = []
    for seq in np.asarray(tokens, float):
        others = seq[:-1][np.lexsort(seq[:-1].T[::-1])]
        key = (seq[-1].tobytes(), others.tobytes())
        labels.append(keys.setdefault(key, len(keys)))
    return np.array(labels)


def irreducible_risk(tokens, targets):
    """The smallest R = (1/(2N)) sum |yhat - y|^2 over predictions that are
    equal within every indistinguishable group: each group predicts its mean."""
    targets = np.asarray(targets, float).reshape(len(targets), -1)
    labels = indistinguishable_groups(tokens)
    total = 0.0
    for g in np.unique(labels):
        members = targets[labels == g]
        total += float(np.sum((members - members.mean(axis=0)) ** 2))
    return total / (2 * len(targets))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default="pairs.h5", help="HDF5 file to write (default pairs.h5)")
    parser.add_argument("--pairs", type=int, default=4, help="pairs P (N = 2P sequences; default 4)")
    parser.add_argument("--tokens", type=int, default=6, help="tokens per sequence n >= 3 (default 6)")
    parser.add_argument("--dim", type=int, default=4, help="token dimension d (default 4)")
    parser.add_argument("--gap", type=float, default=0.5, help="half the target difference in a pair (default 0.5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of numpy.random.default_rng (default 0)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output file")
    args = parser.parse_args()

    for option, value, least in (("--pairs", args.pairs, 1), ("--tokens", args.tokens, 3), ("--dim", args.dim, 1),
                                 ("--seed", args.seed, 0)):
        if value < least:
            sys.exit(f"error: {option} {value}: give a number >= {least}")
    if not (np.isfinite(args.gap) and args.gap > 0):
        sys.exit(f"error: --gap {args.gap}: give a number > 0")
    if os.path.isdir(args.output):
        sys.exit(f"error: {args.output} is a directory")
    if os.path.exists(args.output) and not args.force:
        sys.exit(f"error: {args.output} exists (give --force to overwrite it)")

    tokens, targets = permutation_pairs(args.pairs, args.tokens, args.dim, args.gap, args.seed)
    import h5py
    with h5py.File(args.output, "w") as f:
        f.attrs["source"] = SOURCE
        for key in ("pairs", "tokens", "dim", "seed"):
            f.attrs[key] = int(getattr(args, key))
        f.attrs["gap"] = float(args.gap)
        g = f.create_group("data")
        g.create_dataset("tokens", data=tokens)
        g.create_dataset("targets", data=targets)
    print(f"wrote {args.output}: {2 * args.pairs} sequences of {args.tokens} tokens x {args.dim} in "
          f"{args.pairs} permutation pairs; irreducible risk without a mask {irreducible_risk(tokens, targets):.6g}")


if __name__ == "__main__":
    main()

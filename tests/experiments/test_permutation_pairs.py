"""The counterexample's data (scripts/make_permutation_pairs.py): every pair
is a reordering with the same last token and other targets, the groups no
permutation-equivariant model separates are found from the tokens alone,
and the irreducible risk matches its closed form and a hand-made case.

  python3 tests/experiments/test_permutation_pairs.py
"""
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from make_permutation_pairs import indistinguishable_groups, irreducible_risk, permutation_pairs  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def sorted_rows(a):
    return a[np.lexsort(a.T[::-1])]


for pairs, n, d, gap, seed in ((4, 6, 4, 0.5, 0), (7, 3, 2, 0.1, 5), (3, 16, 8, 2.0, 11)):
    x, y = permutation_pairs(pairs, n, d, gap, seed)
    tag = f"P={pairs} n={n} d={d} seed={seed}"
    check(x.shape == (2 * pairs, n, d) and y.shape == (2 * pairs, 1), f"{tag}: shapes {x.shape}, {y.shape}")
    a, b = x[0::2], x[1::2]
    check(all(np.array_equal(sorted_rows(a[p, :-1]), sorted_rows(b[p, :-1])) for p in range(pairs)),
          f"{tag}: each pair's first n-1 tokens are the same multiset")
    check(np.array_equal(a[:, -1], b[:, -1]), f"{tag}: each pair keeps its last token")
    check(all(not np.array_equal(a[p], b[p]) for p in range(pairs)), f"{tag}: each pair's order differs")
    check(np.allclose(y[0::2] - y[1::2], 2 * gap), f"{tag}: targets differ by 2 gap")
    labels = indistinguishable_groups(x)
    check(np.array_equal(labels[0::2], labels[1::2]) and np.unique(labels).size == pairs,
          f"{tag}: {pairs} indistinguishable groups, one per pair ({labels.tolist()})")
    check(abs(irreducible_risk(x, y) - gap ** 2 / 2) <= 1e-14 * max(1.0, gap ** 2),
          f"{tag}: irreducible risk {irreducible_risk(x, y):.6g} = gap^2/2 = {gap ** 2 / 2:.6g}")
    check(irreducible_risk(x[0::2], y[0::2]) == 0.0, f"{tag}: no pairs, no irreducible risk")

# A hand-made case: three orderings of one set (targets 1, 2, 6: mean 3,
# squares 4 + 1 + 9) and one other sequence (target 5), N = 4:
# R = 14 / (2 * 4) = 1.75. The same tokens with another last token form a
# group of their own.
t = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
seqs = np.stack([t, t[[1, 0, 2]], t[[1, 0, 2]], t[[2, 1, 0]]])
check(indistinguishable_groups(seqs).tolist() == [0, 0, 0, 1], "another last token is another group")
check(abs(irreducible_risk(seqs, [1.0, 2.0, 6.0, 5.0]) - 1.75) < 1e-15,
      f"hand-made irreducible risk {irreducible_risk(seqs, [1.0, 2.0, 6.0, 5.0])} = 1.75")

with tempfile.TemporaryDirectory(prefix="mft-pairs-") as tmp:
    out = Path(tmp) / "pairs.h5"
    script = str(ROOT / "scripts" / "make_permutation_pairs.py")
    done = subprocess.run([sys.executable, script, "--output", str(out), "--pairs", "3", "--seed", "2"],
                          capture_output=True, text=True)
    check(done.returncode == 0 and out.is_file(), f"writes a file: {done.stdout.strip()} {done.stderr.strip()}")
    import h5py
    with h5py.File(out, "r") as f:
        x, y = permutation_pairs(3, 6, 4, 0.5, 2)
        check(np.array_equal(f["data/tokens"][()], x) and np.array_equal(f["data/targets"][()], y),
              "the file holds the pairs the function draws")
    again = subprocess.run([sys.executable, script, "--output", str(out)], capture_output=True, text=True)
    check(again.returncode != 0 and "exists" in again.stderr, f"refuses to overwrite: {again.stderr.strip()}")
    bad = subprocess.run([sys.executable, script, "--output", str(Path(tmp) / "b.h5"), "--tokens", "2"],
                         capture_output=True, text=True)
    check(bad.returncode != 0 and bad.stderr.strip() == "error: --tokens 2: give a number >= 3",
          f"bad input, one line: {bad.stderr.strip()}")

if failures:
    sys.exit(f"{len(failures)} checks failed")
print("all checks passed")

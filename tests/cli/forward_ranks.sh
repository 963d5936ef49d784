#!/usr/bin/env bash
# `mft forward` prints the same risk on 1, 2 and 3 ranks (to 12 digits), and
# writes the same final tokens.
source "$(dirname "$0")/common.sh"

risks=()
for ranks in 1 2 3; do
  mft_run "$ranks" forward --model.heads 64 --model.slices 16 --output.file "r$ranks.h5"
  [ "$status" -eq 0 ] || { fail "$ranks ranks: exit $status"; cat err.txt; }
  risk=$(sed -n 's/^risk = //p' out.txt)
  [ -n "$risk" ] || fail "$ranks ranks: no 'risk = ' line"
  risks+=("$risk")
  echo "$ranks ranks: risk = $risk"
done
"$PYTHON" - "${risks[@]}" <<'PY' || fail "risks or final tokens differ across rank counts"
import sys, h5py, numpy as np
r = [float(x) for x in sys.argv[1:]]
assert all(abs(x - r[0]) <= 1e-12 * abs(r[0]) for x in r), r
assert all(f"{x:.12g}" == f"{r[0]:.12g}" for x in r), r
X = [h5py.File(f"r{k}.h5", "r")["forward/tokens_final"][...] for k in (1, 2, 3)]
for k in (1, 2):
    err = np.abs(X[k] - X[0]).max() / np.abs(X[0]).max()
    assert err < 1e-12, err
PY
finish

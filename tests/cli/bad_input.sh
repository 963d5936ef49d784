#!/usr/bin/env bash
# Bad input: one line on stderr naming the key or file, a non-zero exit, no
# output file left behind, and no rank left hanging (a 120 s limit).
source "$(dirname "$0")/common.sh"

# expect_refused NAME EXPECTED_TEXT ARGS...: runs `mft forward ARGS` on 2
# ranks in an empty folder; nothing may be written there.
expect_refused() {
  local name=$1 expected=$2
  shift 2
  rm -rf run && mkdir run && cd run
  mft_run 2 forward "$@"
  cd ..
  if [ "$status" -eq 0 ]; then fail "$name: exit status 0"; fi
  if [ "$status" -eq 124 ]; then fail "$name: timed out (a rank hangs?)"; fi
  local lines
  lines=$(wc -l <run/err.txt)
  if [ "$lines" -ne 1 ]; then fail "$name: $lines lines on stderr:"; cat run/err.txt; fi
  if ! grep -qF -- "$expected" run/err.txt; then
    fail "$name: stderr does not name '$expected':"
    cat run/err.txt
  fi
  local left
  left=$(ls run | grep -v -e '^out.txt$' -e '^err.txt$')
  if [ -n "$left" ]; then fail "$name: files left behind: $left"; fi
  echo "ok: $name -> $(head -c 200 run/err.txt)"
}

expect_refused "unknown key" "model.hedas" --model.hedas 3
expect_refused "stray argument" "stray" stray
expect_refused "zero size" "model.heads = 0" --model.heads 0
expect_refused "negative size" "data.sequences = -5" --data.sequences -5
expect_refused "not a number" "init.sigma_qk = abc" --init.sigma_qk abc
expect_refused "bad choice" "readout.kind = max" --readout.kind max
expect_refused "missing config file" "nosuch.ini" --config ../nosuch.ini

printf '[model]\nheads = 4\nslises = 3\n' >typo.ini
expect_refused "unknown key in INI" "model.slises" --config ../typo.ini
printf '[init]\nsigma_v = big\n' >nan.ini
expect_refused "non-number in INI" "init.sigma_v = big" --config ../nan.ini

expect_refused "missing HDF5 file" "missing.h5" --data.task file --data.file ../missing.h5
echo "not HDF5" >text.h5
expect_refused "malformed HDF5 file" "text.h5" --data.task file --data.file ../text.h5
"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('notargets.h5', 'w') as f:
    f['data/tokens'] = np.zeros((3, 4, 8))
with h5py.File('d3.h5', 'w') as f:
    f['data/tokens'] = np.zeros((3, 4, 3))
    f['data/targets'] = np.zeros((3, 1))
with h5py.File('flat.h5', 'w') as f:
    f['data/tokens'] = np.zeros((3, 4))
    f['data/targets'] = np.zeros((3, 1))
" || fail "python could not write the fixtures"
expect_refused "HDF5 without targets" "/data/targets" --data.task file --data.file ../notargets.h5
expect_refused "d mismatch" "model.d = 8" --data.task file --data.file ../d3.h5
expect_refused "tokens of wrong rank" "flat.h5" --data.task file --data.file ../flat.h5

expect_refused "implicit depth TS" "-depth_ts_type" -depth_ts_type beuler
expect_refused "unknown RK tableau" "depth.rk_type = 9z" --depth.rk_type 9z
expect_refused "unwritable output" "output.file = /nonexistent/dir/out.h5" --output.file /nonexistent/dir/out.h5
expect_refused "key twice" "model.heads" --model.heads 2 --model.heads 3

# An unknown command is refused the same way.
mft_run 2 fly
if [ "$status" -eq 0 ] || [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -q "fly" err.txt; then
  fail "unknown command"; cat err.txt
fi
finish

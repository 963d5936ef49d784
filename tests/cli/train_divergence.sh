#!/usr/bin/env bash
# A training step that overflows stops every rank with one line naming the
# step, the depth slice and the quantity, the exit code of a diverged run
# (4, not 1: other failures), and the file keeps what was written before
# (the initial history row and snapshot).
source "$(dirname "$0")/common.sh"

mft_run 2 train --train.dtau 1e8 --train.steps 5 --output.file div.h5 --output.log div.jsonl
[ "$status" -eq 4 ] || fail "exit status $status, expected 4 (diverged)"
[ "$(wc -l <err.txt)" -eq 1 ] || { fail "stderr is not one line"; cat err.txt; }
grep -q "training step 1: .*slice [0-9]" err.txt || { fail "message names no step and slice"; cat err.txt; }
cat err.txt
"$PYTHON" -c "
import h5py
f = h5py.File('div.h5', 'r')
assert list(f['history/step'][:]) == [0], f['history/step'][:]
assert list(f['particles/step'][:]) == [0]
end = f['history'].attrs['end']
assert end == 'diverged' and 'training step 1' in f['history'].attrs['end_error'], dict(f['history'].attrs)
" || fail "div.h5 does not hold the state before the failure and /history.end = diverged"
# A run that ends its steps records done.
mft_run 1 train --train.steps 2 --output.file done.h5
"$PYTHON" -c "
import h5py
assert h5py.File('done.h5', 'r')['history'].attrs['end'] == 'done'
" || fail "a finished run's /history.end is not done"
"$PYTHON" -c "
import json
events = [json.loads(line) for line in open('div.jsonl')]
assert [e['event'] for e in events] == ['start', 'row', 'end'], events
assert events[-1]['status'] == 'diverged' and 'training step 1' in events[-1]['error'], events[-1]
" || { fail "the log of a diverged run"; cat div.jsonl; }

# The same for the other methods: sgd on minibatches, Adam, Langevin noise.
for method in "--train.method sgd --train.batch 16 --train.dtau 1e8" "--train.method adam --train.dtau 1e300" \
              "--train.temperature 1e300"; do
  read -r -a a <<<"$method"
  mft_run 2 train "${a[@]}" --train.steps 5 --output.file div-m.h5 --output.overwrite true
  [ "$status" -eq 4 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "training step 1: " err.txt ||
    { fail "$method: exit $status, expected 4 and one line naming step 1"; cat err.txt; }
  echo "$method: $(cat err.txt)"
done

# Between history rows (output.history_every 5, a snapshot every step) the
# step that overflows is found before its snapshot: the file's last
# snapshot is the finite one before it.
mft_run 2 train --train.method sgd --train.batch 16 --train.dtau 1e8 --train.steps 5 --output.history_every 5 \
  --output.snapshot_every 1 --output.file div-rows.h5
[ "$status" -eq 4 ] && grep -q "training step 1: " err.txt || { fail "between rows: exit $status"; cat err.txt; }
"$PYTHON" -c "
import h5py, numpy as np
f = h5py.File('div-rows.h5', 'r')
n = f['particles'].attrs['complete']
assert list(f['particles/step'][:n]) == [0], f['particles/step'][:n]
assert all(np.isfinite(f['particles/' + k][:n]).all() for k in ('Q', 'K', 'V'))
" || fail "a run diverging between history rows wrote a non-finite snapshot"

# Tokens that overflow in the first forward solve: exit 4 at step 0, and the
# file still holds the initial snapshot (written before any computation).
"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('huge.h5', 'w') as f:
    f['data/tokens'] = np.full((4, 5, 8), 1e300)
    f['data/targets'] = np.zeros((4, 1))
"
mft_run 2 train --data.task file --data.file huge.h5 --output.file huge-run.h5
[ "$status" -eq 4 ] || { fail "tokens of 1e300: exit $status, expected 4"; cat err.txt; }
"$PYTHON" -c "
import h5py
f = h5py.File('huge-run.h5', 'r')
assert f['particles'].attrs['complete'] == 1 and list(f['particles/step'][:]) == [0]
print('tokens of 1e300: the file keeps its initial snapshot')
" || fail "a run that fails at step 0 left no snapshot"

# Bad training input.
for args in "--train.dtau 0" "--train.dtau -1" "--train.steps -2" "--train.lambda -0.1" \
            "--train.ts_type beuler" "--output.snapshot_every 0"; do
  rm -f bad.h5
  read -r -a a <<<"$args"
  mft_run 2 train "${a[@]}" --output.file bad.h5
  key=${a[0]#--}
  if [ "$status" -ne 2 ] || [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -qF "$key" err.txt || [ -e bad.h5 ]; then
    fail "$args: status $status"; cat err.txt
  else
    echo "ok: $args -> $(cat err.txt)"
  fi
done
mft_run 2 train -train_ts_type beuler --output.file bad.h5
if [ "$status" -ne 2 ] || ! grep -q "train_ts_type" err.txt || [ -e bad.h5 ]; then fail "-train_ts_type beuler"; cat err.txt; fi
mft_run 2 train --depth.ts_type ssp --output.file bad.h5
if [ "$status" -ne 2 ] || ! grep -q "depth.ts_type = ssp" err.txt || [ -e bad.h5 ]; then fail "ssp in depth"; cat err.txt; fi
finish

#!/usr/bin/env bash
# Restart: 2N steps straight equal N steps, then --restart for N more, byte
# for byte (particles and history but wall_time), on 1 and 2 ranks; a run
# killed with SIGKILL restarts from its last snapshot to the same final
# particles; restarts from other configurations or bad files are refused.
source "$(dirname "$0")/common.sh"

base=(--model.slices 3 --model.mlp_particles 3 --model.mlp_width 4 --data.sequences 10
      --data.tokens 6 --train.dtau 0.1 --output.snapshot_every 4)
run=(--model.heads 5 "${base[@]}")

for ranks in 1 2; do
  restart_case "$ranks" 16 "${run[@]}"
done

# A restart takes its keys from the file: the command mft prints at a stop,
# with nothing else, continues the run (here with more steps); --resume
# starts output.file when it is missing and continues it when it exists.
mft_run 2 train "${run[@]}" --train.steps 8 --output.file fileonly.h5
mft_run 2 train --restart fileonly.h5 --train.steps 16
[ "$status" -eq 0 ] || { fail "restart with the file's keys alone: exit $status"; cat err.txt; }
same_runs straight.h5 fileonly.h5 || fail "the restart with the file's keys differs from the straight run"
grep -q "was begun by an mft" out.txt && fail "a restart by the build that began the file printed a build note"
# A file begun by another build: the restart says so, and that its steps
# need not equal an uninterrupted run bit for bit.
cp fileonly.h5 otherbuild.h5
"$PYTHON" -c "import h5py; h5py.File('otherbuild.h5', 'r+').attrs['compiled_for'] = '-march=x86-64, GNU 1.0, Release'"
mft_run 2 train --restart otherbuild.h5 --train.steps 20
[ "$status" -eq 0 ] && grep -q "^note: otherbuild.h5 was begun by an mft compiled for -march=x86-64, GNU 1.0, Release (this one: -march=" out.txt ||
  { fail "no note on a restart of a file begun by another build"; cat out.txt err.txt; }
# What the file says of its build reaches the terminal escaped and cut to a line.
cp fileonly.h5 hostilebuild.h5
"$PYTHON" -c "import h5py; h5py.File('hostilebuild.h5', 'r+').attrs['blas'] = 'Open\x1b[31mBLAS' + 'x' * 5000"
mft_run 2 train --restart hostilebuild.h5 --train.steps 20
[ "$status" -eq 0 ] && grep -qF 'running Open\x1b[31mBLASxxx' out.txt && grep -qF 'xxx... (this one: ' out.txt &&
  ! grep -q $'\x1b' out.txt || { fail "the file's blas reached the terminal raw"; cat out.txt err.txt; }
# The keys a restart changed are the file's now: its next restart goes on from them.
"$PYTHON" -c "
import h5py
c = h5py.File('fileonly.h5', 'r')['config'].attrs
assert c['train.steps'] == 16 and c['model.heads'] == 5, dict(c)
" || fail "the restart did not write train.steps = 16 into /config"
mft_run 2 train "${run[@]}" --train.steps 8 --output.file resumed.h5 --resume
[ "$status" -eq 0 ] || { fail "--resume of a missing file: exit $status"; cat err.txt; }
grep -q "restart from" out.txt && fail "--resume of a missing file restarted"
mft_run 2 train "${run[@]}" --train.steps 16 --output.file resumed.h5 --resume
[ "$status" -eq 0 ] || { fail "--resume of an existing file: exit $status"; cat err.txt; }
grep -q "restart from resumed.h5: step 8" out.txt || fail "--resume did not continue resumed.h5"
same_runs straight.h5 resumed.h5 || fail "the resumed run differs from the straight run"
# A key given as `auto` is compared as the run resolved it (the file keeps
# the number): the same command resumes; another number is refused.
mft_run 2 train "${run[@]}" --train.steps 8 --init.sigma_qk auto --init.sigma_v auto --output.file auto.h5 --resume
mft_run 2 train "${run[@]}" --train.steps 16 --init.sigma_qk auto --init.sigma_v auto --output.file auto.h5 --resume
[ "$status" -eq 0 ] && grep -q "restart from auto.h5: step 8" out.txt ||
  { fail "--resume with init.sigma_qk = auto (the file holds the resolved scale): exit $status"; cat err.txt; }
same_runs straight.h5 auto.h5 || fail "the run resumed with auto scales differs from the straight run"
mft_run 2 train "${run[@]}" --train.steps 24 --init.sigma_qk 0.123 --output.file auto.h5 --resume
[ "$status" -eq 2 ] && grep -q "init.sigma_qk = 0.123: --resume auto.h5 continues the file's run, which has init.sigma_qk = 0.5" err.txt ||
  { fail "a resume that changes init.sigma_qk: exit $status"; cat err.txt; }
before=$(md5sum <fileonly.h5)
mft_run 2 train --restart fileonly.h5 --model.heads 8
[ "$status" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] &&
  grep -q "model.heads = 8: --restart fileonly.h5 continues the file's run, which has model.heads = 5" err.txt ||
  { fail "a restart that changes model.heads: exit $status"; cat err.txt; }
[ "$(md5sum <fileonly.h5)" = "$before" ] || fail "a refused restart changed the file"

# Restart on another rank count: equal to reduction rounding.
mft_run 2 train "${run[@]}" --train.steps 8 --output.file other.h5
mft_run 1 train "${run[@]}" --train.steps 16 --restart other.h5
[ "$status" -eq 0 ] || { fail "restart on 1 rank of a 2-rank run: exit $status"; cat err.txt; }
"$PYTHON" -c "
import h5py, numpy as np
a, b = h5py.File('straight.h5', 'r'), h5py.File('other.h5', 'r')
for k in ('Q', 'K', 'V', 'W1', 'W2'):
    x, y = a['particles/' + k][...], b['particles/' + k][...]
    assert np.abs(x - y).max() <= 1e-11 * np.abs(x).max(), k
" || fail "restart on another rank count differs beyond rounding"

# SIGKILL of the whole job after the snapshot of step 30, then restart. The
# kill lands in the 29 steps of compute before the next snapshot (about a
# second at this size): mft does not touch the file there. (A kill in the
# milliseconds of a snapshot write itself can leave a file HDF5 refuses.)
kill_run=(--model.heads 24 --model.slices 6 --data.sequences 24 --data.tokens 8 --train.dtau 0.1
          --output.snapshot_every 30 --train.steps 60)
rm -f killed.h5
setsid "$MPIEXEC" -q -n 2 "$MFT" train "${kill_run[@]}" --train.print_every 1 \
  --output.file killed.h5 >killed.txt 2>&1 &
pid=$!
for _ in $(seq 12000); do
  grep -qE "^ +30 " killed.txt && break
  sleep 0.02
done
# SIGKILL to mpirun and to the ranks (process groups of their own), and wait
# until they are gone: a live rank would still hold the file's writer lock.
kill -9 -- "-$pid" 2>/dev/null
pkill -9 -f -- "--output.file killed.h5" 2>/dev/null
wait "$pid" 2>/dev/null
for _ in $(seq 600); do pgrep -f -- "--output.file killed.h5" >/dev/null || break; sleep 0.1; done
"$PYTHON" -c "
import h5py
f = h5py.File('killed.h5', 'r')
print('after SIGKILL: complete snapshots', f['particles'].attrs['complete'], 'steps', list(f['particles/step'][:]))
assert f['particles'].attrs['complete'] >= 2 and f['particles/step'][1] == 30
" || fail "the killed run's file does not hold its snapshots"
mft_run 2 train "${kill_run[@]}" --output.file full.h5
mft_run 2 train "${kill_run[@]}" --restart killed.h5
[ "$status" -eq 0 ] || { fail "restart after SIGKILL: exit $status"; cat err.txt; }
same_runs full.h5 killed.h5 || fail "the restarted killed run differs from an uninterrupted one"

# Refused restarts: one line naming the key or the file; the file untouched.
cp part.h5 keep.h5
expect_restart_refused() { # TEXT ARGS...
  local text=$1
  shift
  mft_run 2 train "$@"
  if [ "$status" -ne 2 ] || [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -qF -- "$text" err.txt; then
    fail "restart $*: status $status"; cat err.txt
  else
    echo "ok: $(cat err.txt)"
  fi
}
expect_restart_refused "model.heads = 6" "${base[@]}" --model.heads 6 --restart keep.h5
expect_restart_refused "readout.kind = mean" "${run[@]}" --readout.kind mean --restart keep.h5
expect_restart_refused "nosuch.h5" "${run[@]}" --restart nosuch.h5
head -c 3000 keep.h5 >truncated.h5
expect_restart_refused "truncated.h5" "${run[@]}" --restart truncated.h5
"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('foreign.h5', 'w') as f:
    f['data/tokens'] = np.zeros((2, 3, 8))
"
expect_restart_refused "foreign.h5" "${run[@]}" --restart foreign.h5
mft_run 1 forward --output.file fwd.h5
expect_restart_refused "not a training run file" --restart fwd.h5

mft_run 2 forward --restart keep.h5
grep -q "only mft train" err.txt || fail "forward --restart not refused"
cmp -s part.h5 keep.h5 || fail "a refused restart changed the file"
# Truncated and foreign files as data input are refused too.
mft_run 2 train --data.task file --data.file truncated.h5 --output.file x.h5
[ "$status" -eq 2 ] && grep -q "truncated.h5" err.txt && [ ! -e x.h5 ] || { fail "truncated data file"; cat err.txt; }
# A file from before the keys of the model variants and the species
# attribute (as earlier versions wrote it) restarts, computing with the
# defaults those keys have.
rm -f straight.h5 old.h5
mft_run 2 train "${run[@]}" --train.steps 8 --output.file straight.h5
mft_run 2 train "${run[@]}" --train.steps 4 --output.file old.h5
"$PYTHON" - <<'PY' || fail "could not make an old-format file"
import h5py
with h5py.File("old.h5", "r+") as f:
    for key in ("model.attention", "model.causal", "readout.dim", "loss.kind", "data.test_sequences"):
        del f["config"].attrs[key]
    for name in f["particles"]:
        if "species" in f["particles"][name].attrs:
            del f["particles"][name].attrs["species"]
PY
mft_run 2 train "${run[@]}" --train.steps 8 --restart old.h5
[ "$status" -eq 0 ] || { fail "restart of an old-format file: exit $status"; cat err.txt; }
same_runs straight.h5 old.h5 || fail "the old-format restart is not bit-identical"
finish

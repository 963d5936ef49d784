#!/usr/bin/env bash
# The analysis scripts on a small run's output: PNGs are written, and the
# numbers they print match values computed here from the file.
source "$(dirname "$0")/common.sh"

mft_run 2 train --model.heads 6 --model.slices 3 --model.d 4 --model.head_dim 4 --data.sequences 12 \
  --data.tokens 6 --train.steps 20 --train.dtau 0.2 --train.lambda 0.01 --output.snapshot_every 5 \
  --output.file a.h5
[ "$status" -eq 0 ] || { fail "fixture run: exit $status"; cat err.txt; }

is_png() { [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }

# plot_history: no fit unless asked; with --fit the printed rate equals a
# least-squares fit done here.
"$PYTHON" "$SCRIPTS/plot_history.py" a.h5 -o plain.png >plain.txt 2>&1 || { fail "plot_history"; cat plain.txt; }
is_png plain.png || fail "plot_history wrote no PNG"
grep -q "rate r" plain.txt && { fail "plot_history fitted a rate unasked"; cat plain.txt; }
"$PYTHON" "$SCRIPTS/plot_history.py" a.h5 --fit -o history.png >hist.txt 2>&1 || { fail "plot_history --fit"; cat hist.txt; }
cat hist.txt
is_png history.png || fail "plot_history --fit wrote no PNG"
"$PYTHON" - <<'PY' || fail "plot_history's rate is wrong"
import re, h5py, numpy as np
h = h5py.File("a.h5", "r")["history"]
tau, R = h["tau"][:], h["risk"][:]
sel = tau >= tau[0] + 0.5 * (tau[-1] - tau[0])
rate = -np.polyfit(tau[sel], np.log(R[sel]), 1)[0]
printed = float(re.search(r"rate r = (\S+)", open("hist.txt").read()).group(1))
print(f"rate: printed {printed:.6e}, computed {rate:.6e}")
assert abs(printed - rate) <= 1e-6 * abs(rate)
PY

# plot_particles
"$PYTHON" "$SCRIPTS/plot_particles.py" a.h5 -o particles.png --snapshots 0,2,-1 --slices 0,2 >part.txt 2>&1 \
  || { fail "plot_particles"; cat part.txt; }
is_png particles.png || fail "plot_particles wrote no PNG"
grep -q "snapshots \[0, 10, 20\]" part.txt || { fail "plot_particles chose other snapshots"; cat part.txt; }
# by training step; by default every snapshot (5 here: steps 0, 5, ..., 20)
"$PYTHON" "$SCRIPTS/plot_particles.py" a.h5 -o steps.png --steps 5,20 >steps.txt 2>&1 || { fail "plot_particles --steps"; cat steps.txt; }
grep -q "snapshots \[5, 20\]" steps.txt || { fail "plot_particles --steps 5,20 chose other snapshots"; cat steps.txt; }
"$PYTHON" "$SCRIPTS/plot_particles.py" a.h5 -o all.png >all.txt 2>&1 || { fail "plot_particles"; cat all.txt; }
grep -q "snapshots \[0, 5, 10, 15, 20\]" all.txt || { fail "plot_particles: not every snapshot by default"; cat all.txt; }
if "$PYTHON" "$SCRIPTS/plot_particles.py" a.h5 --steps 7 >nostep.txt 2>&1; then fail "plot_particles --steps 7 ran"; fi
grep -q "no particle snapshot of step 7 (snapshots at steps 0, 5, 10, 15, 20)" nostep.txt ||
  { fail "plot_particles --steps 7: not its one-line refusal"; cat nostep.txt; }

# compare_runs: a run against itself is at distance 0; against a copy with
# every V entry shifted by 0.1 (a translation of every slice's measure by
# a vector of norm^2 = 0.01 d^2) at W2c^2 = 0.01 * 16 = 0.16 exactly.
"$PYTHON" -c "
import shutil, h5py
shutil.copy('a.h5', 'shifted.h5')
with h5py.File('shifted.h5', 'r+') as f:
    f['particles/V'][...] = f['particles/V'][...] + 0.1
"
"$PYTHON" "$SCRIPTS/compare_runs.py" a.h5 a.h5 shifted.h5 -o compare.png >cmp.txt 2>&1 || { fail "compare_runs"; cat cmp.txt; }
cat cmp.txt
is_png compare.png || fail "compare_runs wrote no PNG"
"$PYTHON" - <<'PY' || fail "compare_runs printed wrong distances"
rows = [l.split() for l in open("cmp.txt") if l.strip().startswith("a.h5")]
w2 = {(r[0], r[1]): float(r[2]) for r in rows}
assert abs(w2[("a.h5", "a.h5")]) < 1e-12, w2
assert abs(w2[("a.h5", "shifted.h5")] - 0.16) < 1e-10, w2
assert float(rows[0][3]) == 0.0
PY

# Every script: --help, and a one-line refusal of files that are not mft/1 runs.
echo "plain text" >text.h5
"$PYTHON" -c "
import h5py
with h5py.File('foreign.h5', 'w') as f:
    f.attrs['format'] = 'other/2'
"
for script in plot_history plot_particles compare_runs check_gradient_step plot_tokens plot_attention; do
  "$PYTHON" "$SCRIPTS/$script.py" --help >/dev/null 2>&1 || fail "$script --help"
  for bad in text.h5 foreign.h5 missing.h5; do
    args=("$bad")
    [ "$script" = compare_runs ] && args=(a.h5 "$bad")
    if "$PYTHON" "$SCRIPTS/$script.py" "${args[@]}" >bad.txt 2>&1; then
      fail "$script accepted $bad"
    elif [ "$(wc -l <bad.txt)" -ne 1 ] || ! grep -q "$bad" bad.txt; then
      fail "$script on $bad:"; cat bad.txt
    fi
  done
done
cat bad.txt
finish

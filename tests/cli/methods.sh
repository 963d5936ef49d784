#!/usr/bin/env bash
# The training methods: sgd on minibatches, adam and Langevin noise give the
# same particles on 1, 2 and 3 ranks (to reduction rounding); a run stopped
# after step 5 (train.steps or SIGUSR1) and restarted ends bit for bit where
# a straight run ends, optimiser state included; a restart that changes the
# method or its constants is refused; Adam's steps match MODEL.md §10
# computed from the file; /history/batch_risk beside the full-data risk; one
# figure overlays the methods.
source "$(dirname "$0")/common.sh"

base=(--model.heads 5 --model.slices 3 --model.mlp_particles 3 --model.mlp_width 4 --data.sequences 12
      --data.tokens 5 --train.dtau 0.05 --train.lambda 0.1 --output.snapshot_every 2)
names=(sgd adam langevin langevin_flow)
declare -A method=(
  [sgd]="--train.method sgd --train.batch 4"
  [adam]="--train.method adam --train.batch 6 --train.beta1 0.8"
  [langevin]="--train.method sgd --train.batch 4 --train.temperature 0.001"
  [langevin_flow]="--train.temperature 0.002")

# compare A.h5 B.h5 TOLERANCE: final particles, optimiser state and the risks
# agree to TOLERANCE relative (0: bit for bit, and the whole history too).
compare() {
  "$PYTHON" - "$@" <<'PY'
import sys, h5py, numpy as np
a, b, tol = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r"), float(sys.argv[3])
assert a["particles/step"][-1] == b["particles/step"][-1], "different last steps"
pairs = [("particles", k) for k in ("Q", "K", "V", "W1", "W2")]
pairs += [("optimizer", k) for k in (a["optimizer"] if "optimizer" in a else [])]
pairs += [("history", k) for k in a["history"] if k not in ("wall_time", "step", "tau")]
worst = 0.0
for g, k in pairs:
    x = a[g][k][-1] if g != "history" else a[g][k][...]
    y = b[g][k][-1] if g != "history" else b[g][k][...]
    if tol == 0:
        assert x.shape == y.shape and x.tobytes() == y.tobytes(), f"/{g}/{k} differs"
    else:
        err = np.abs(x - y).max() / max(np.abs(x).max(), 1e-300)
        worst = max(worst, err)
        assert err <= tol, f"/{g}/{k}: relative difference {err:.2e}"
print(f"  {sys.argv[1]} vs {sys.argv[2]}: " + ("identical" if tol == 0 else f"max relative {worst:.1e}"))
PY
}

for name in "${names[@]}"; do
  read -r -a args <<<"${method[$name]}"
  # Rank invariance of a 5-step run.
  for ranks in 1 2 3; do
    mft_run "$ranks" train "${base[@]}" "${args[@]}" --train.steps 5 --output.file "$name-$ranks.h5"
    [ "$status" -eq 0 ] || { fail "$name on $ranks ranks: exit $status"; cat err.txt; }
  done
  compare "$name-1.h5" "$name-2.h5" 1e-12 || fail "$name: 2 ranks differ from 1"
  compare "$name-1.h5" "$name-3.h5" 1e-12 || fail "$name: 3 ranks differ from 1"
  # Stopped after step 5 by train.steps, restarted to 12: a straight run's end.
  mft_run 2 train "${base[@]}" "${args[@]}" --train.steps 12 --output.file "$name-straight.h5"
  cp "$name-2.h5" "$name-part.h5"
  mft_run 2 train "${base[@]}" "${args[@]}" --train.steps 12 --restart "$name-part.h5"
  [ "$status" -eq 0 ] || { fail "$name restart: exit $status"; cat err.txt; }
  compare "$name-straight.h5" "$name-part.h5" 0 || fail "$name: the restart is not bit-identical"
done

# The method is named in the header and in /history; sgd's R is the full data's.
grep -q "training: sgd (Euler on minibatches of 4 of 12 sequences) + Langevin noise, T = 0.001" \
  <("$MPIEXEC" -q -n 1 "$MFT" train "${base[@]}" ${method[langevin]} --train.steps 0 --output.file h.h5) ||
  fail "the header does not name the method"
mft_run 1 train "${base[@]}" --train.steps 5 --output.file flow-1.h5
"$PYTHON" - <<'PY' || fail "sgd's history: risk, batch_risk or method wrong"
import h5py
sgd, flow = h5py.File("sgd-1.h5", "r"), h5py.File("flow-1.h5", "r")
print("  /history.method:", sgd["history"].attrs["method"], "|", h5py.File("adam-1.h5", "r")["history"].attrs["method"])
assert sgd["history/risk"][0] == flow["history/risk"][0], "R of the initial particles is not the full data's"
assert sgd["history/batch_risk"][0] != sgd["history/risk"][0], "batch_risk is the full risk"
assert "batch_risk" not in flow["history"]
assert "optimizer" not in sgd and "optimizer" in h5py.File("adam-1.h5", "r")
PY

# SIGUSR1 during a long run: the stop snapshot restarts to a straight run's end.
for name in adam langevin; do
  read -r -a args <<<"${method[$name]}"
  rm -f "$name-usr1.h5"
  "$MPIEXEC" -q -n 2 "$MFT" train "${base[@]}" "${args[@]}" --train.steps 100000 --train.print_every 1 \
    --output.file "$name-usr1.h5" >usr1.txt 2>&1 &
  pid=$!
  for _ in $(seq 1200); do grep -qE "^ +20 " usr1.txt && break; sleep 0.1; done
  kill -USR1 "$pid"
  wait "$pid"
  status=$?
  [ "$status" -eq 75 ] || { fail "$name SIGUSR1: exit $status, expected 75"; tail -3 usr1.txt; }
  stop=$("$PYTHON" -c "import h5py; print(h5py.File('$name-usr1.h5', 'r')['particles/step'][-1])")
  end=$((stop + 7))
  echo "  $name: stopped by SIGUSR1 after step $stop; restart to $end"
  mft_run 2 train "${base[@]}" "${args[@]}" --train.steps "$end" --restart "$name-usr1.h5"
  [ "$status" -eq 0 ] || { fail "$name restart after SIGUSR1: exit $status"; cat err.txt; }
  mft_run 2 train "${base[@]}" "${args[@]}" --train.steps "$end" --output.file "$name-usr1-straight.h5"
  compare "$name-usr1-straight.h5" "$name-usr1.h5" 0 || fail "$name: restart after SIGUSR1 is not bit-identical"
done

# A restart that changes the method or a constant: exit 2, one line, file untouched.
cp adam-2.h5 refused.h5
before=$(md5sum <refused.h5)
for change in "--train.method sgd --train.batch 6" "--train.method adam --train.batch 6 --train.beta1 0.9" \
              "--train.method adam --train.batch 4 --train.beta1 0.8"; do
  read -r -a args <<<"$change"
  mft_run 2 train "${base[@]}" "${args[@]}" --train.steps 12 --restart refused.h5
  [ "$status" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "continues the file's run, which has train\.\(method\|batch\|beta1\)" err.txt ||
    { fail "restart with $change: exit $status, expected 2 and one line"; cat err.txt; }
  echo "  refused ($change): $(cat err.txt)"
done
[ "$(md5sum <refused.h5)" = "$before" ] || fail "a refused restart changed the file"

# Adam's three steps against MODEL.md §10 and the independent NumPy gradient.
gradient_step adam-steps 2 --model.heads 4 --model.slices 2 --model.d 4 --model.head_dim 3 --data.sequences 6 \
  --data.tokens 4 --train.method adam --train.dtau 0.01 --train.lambda 0.05 --output.snapshot_every 1 --train.steps 3

# One figure: the methods against tau and wall time.
"$PYTHON" "$SCRIPTS/plot_history.py" flow-1.h5 sgd-1.h5 adam-1.h5 langevin-1.h5 -o methods.png >plot.txt 2>&1 ||
  { fail "plot_history.py of four runs failed"; cat plot.txt; }
[ -s methods.png ] || fail "no figure from plot_history.py"
cat plot.txt
finish

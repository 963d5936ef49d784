#!/usr/bin/env bash
# Every input in examples/ runs, in a reduced form (3 training steps; the
# digits from scripts/make_digits.py in a temporary folder): the command
# its "# run:" line names, with its options, into a file of this test's.
# Each INI file says what it shows, how to run it and how long it takes.
source "$(dirname "$0")/common.sh"
EXAMPLES="$(cd "$SCRIPTS/../examples" && pwd)"

count=0
for ini in "$EXAMPLES"/*.ini; do
  name=$(basename "$ini" .ini)
  run=$(grep -m1 '^# run: ' "$ini")
  grep -q '^# time: ' "$ini" || fail "$name.ini: no '# time:' line"
  [ -n "$run" ] || { fail "$name.ini: no '# run:' line"; continue; }
  [[ "$run" == *"--config examples/$name.ini"* ]] || fail "$name.ini: its run line does not read it: $run"
  read -r -a words <<<"${run#\# run: }"
  # mpirun -n P build/apps/mft COMMAND --config FILE [OPTIONS ...] --output.file F
  command=${words[4]}
  options=()
  for ((i = 7; i < ${#words[@]}; i++)); do
    [ "${words[$i]}" = --output.file ] && { i=$((i + 1)); continue; }
    options+=("${words[$i]}")
  done
  reduced=()
  [ "$command" = train ] && reduced=(--train.steps 3)
  if grep -q '^file = runs/digits.h5' "$ini"; then
    [ -f digits-data.h5 ] || "$PYTHON" "$SCRIPTS/make_digits.py" --output digits-data.h5 >digits.txt 2>&1 ||
      { fail "make_digits.py"; cat digits.txt; continue; }
    reduced+=(--data.file digits-data.h5)
  fi
  mft_run 2 "$command" --config "$ini" "${options[@]}" "${reduced[@]}" --output.file "$name.h5"
  if [ "$status" -ne 0 ]; then
    fail "examples/$name.ini ($command ${options[*]} ${reduced[*]}): exit $status"
    cat err.txt
    continue
  fi
  [ -s "$name.h5" ] || fail "examples/$name.ini wrote no $name.h5"
  echo "ok: examples/$name.ini: $(head -1 out.txt)"
  count=$((count + 1))
done
[ "$count" -ge 8 ] || fail "only $count examples ran"

# The sweep table, here without Slurm, each run cut to 2 steps.
table="$EXAMPLES/sweep-heads-slices.csv"
steps_column=$(head -n 20 "$table" | grep -v '^#' | head -1 | tr ',' '\n' | grep -nx 'train.steps' | cut -d: -f1)
[ -n "$steps_column" ] || fail "the sweep table has no train.steps column to cut"
awk -F, -v OFS=, -v c="$steps_column" '/^#/ || NR == 1 || !/[0-9]/ {print; next} {$c = 2; print}' "$table" >sweep.csv
if PYTHONPATH="$SCRIPTS" "$PYTHON" -m mft.sweep run sweep.csv --jobs 2 --ranks 1 --name ex --mft "$MFT" >sweep.txt 2>&1; then
  echo "ok: the sweep table: $(grep -c '^sweep-ex-' sweep.txt) runs collected"
else
  fail "the sweep table of examples/: exit $?"; cat sweep.txt
fi
finish

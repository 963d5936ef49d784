#!/usr/bin/env bash
# What a new user tries first: -h, -help and --help print mft's help and run
# nothing; each command's help lists the keys it reads and its own options;
# a PETSc option that nothing reads is refused before anything is written;
# --dry-run checks and resolves everything, prints the configuration as an
# INI file that --config reads back, and writes nothing.
source "$(dirname "$0")/common.sh"

nothing_written() { # WHAT: the working folder holds no file but the logs
  local extra
  extra=$(ls -A | grep -vE '^(out|err)\.txt$|\.ini$|\.keep$')
  [ -z "$extra" ] || { fail "$1 wrote: $extra"; rm -f $extra; }
}

for args in "-h" "--help" "train -h" "train -help" "train --help" "forward -h" "ntk --help" "train --model.heads 4 -h"; do
  read -r -a words <<<"$args"
  mft_run 1 "${words[@]}"
  [ "$status" -eq 0 ] || { fail "mft $args: exit $status"; cat err.txt; }
  grep -q "^usage: mpirun -n P mft" out.txt || { fail "mft $args printed no usage"; head -3 out.txt; }
  nothing_written "mft $args"
done
mft_run 1 train -h
for word in --restart --resume --dry-run train.steps train.method model.heads; do
  grep -q -- "$word" out.txt || fail "mft train -h does not mention $word"
done
grep -qE "^ +--cgf\." out.txt && fail "mft train -h lists cgf.* keys, which train does not read"
grep -qE "^ +--ntk\.part" out.txt && fail "mft train -h lists ntk.part, which train does not read"
mft_run 1 ntk -h
for word in --from --snapshot --cgf cgf.points ntk.part; do
  grep -q -- "$word" out.txt || fail "mft ntk -h does not mention $word"
done
grep -qE -- "--restart|train\.steps|ntk\.every|output\.snapshot_every" out.txt && fail "mft ntk -h lists what train reads"
mft_run 1 forward -h
grep -qE "^ +--(train|ntk|cgf)\." out.txt && fail "mft forward -h lists keys forward does not read"
mft_run 1 --petsc-help
[ "$status" -eq 0 ] && grep -q -- "-depth_ts_type" out.txt && grep -q -- "-train_ts_type" out.txt ||
  { fail "mft --petsc-help: exit $status, no -depth_ts_type or -train_ts_type"; tail -3 out.txt err.txt; }
nothing_written "mft --petsc-help"

# docs/CONFIG.md is the program's own key table.
"$MFT" --key-reference >config.md || fail "mft --key-reference: exit $?"
cmp -s config.md "$SCRIPTS/../docs/CONFIG.md" ||
  { fail "docs/CONFIG.md differs from mft --key-reference: regenerate it with build/apps/mft --key-reference > docs/CONFIG.md"
    diff config.md "$SCRIPTS/../docs/CONFIG.md" | head -20; }
rm -f config.md
# docs/FORMAT.md's tables of /particles, /history and /optimizer are the
# program's (each table of mft --format-reference appears in it whole).
"$MFT" --format-reference >format.md || fail "mft --format-reference: exit $?"
"$PYTHON" - format.md "$SCRIPTS/../docs/FORMAT.md" <<'PY' ||
import sys
tables = [t.strip("\n") + "\n" for t in open(sys.argv[1]).read().split("\n\n")]
doc = open(sys.argv[2]).read()
assert len(tables) == 3, f"{len(tables)} tables"
for t in tables:
    assert t in doc, "not in docs/FORMAT.md:\n" + t
PY
  fail "docs/FORMAT.md's tables differ from mft --format-reference: paste its output over them"
rm -f format.md

small=(--model.heads 3 --model.slices 2 --data.sequences 6 --data.tokens 5 --train.steps 2 --train.dtau 0.01)
for option in "-depth_ts_tpye euler" "-train_ts_monitr" "-log_veiw"; do
  read -r -a words <<<"$option"
  mft_run 2 train "${small[@]}" --output.file o.h5 "${words[@]}"
  [ "$status" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q -- "^mft: error: ${words[0]} = " err.txt ||
    { fail "mft train $option: exit $status, expected 2 and one line naming it"; cat err.txt; }
  nothing_written "mft train $option"
done
echo "refused: $(cat err.txt)"
mft_run 2 train "${small[@]}" --train.method adam --train.batch 2 --output.file o.h5 -train_ts_monitor
[ "$status" -eq 2 ] && grep -q -- "-train_ts_monitor" err.txt || fail "adam took -train_ts_monitor (no train TS)"
mft_run 1 forward "${small[@]}" --output.file o.h5 -depth_ts_monitor
[ "$status" -eq 0 ] || { fail "forward -depth_ts_monitor: exit $status"; cat err.txt; }
rm -f o.h5

# --dry-run: the resolved configuration, read back to the same text (a fixed
# memory limit: MemAvailable may move between the two runs).
for command in train forward ntk; do
  mft_run 2 "$command" "${small[@]}" --run.max_memory 1G --output.file o.h5 --dry-run
  [ "$status" -eq 0 ] || { fail "$command --dry-run: exit $status"; cat err.txt; }
  nothing_written "$command --dry-run"
  grep -q "^# memory: about" out.txt || fail "$command --dry-run printed no memory estimate"
  grep -q "^heads = 3$" out.txt || fail "$command --dry-run: no [model] heads = 3"
  cp out.txt "$command.ini"
  mft_run 2 "$command" --config "$command.ini" --dry-run
  [ "$status" -eq 0 ] || { fail "$command --config (its dry run) --dry-run: exit $status"; cat err.txt; }
  cmp -s out.txt "$command.ini" || { fail "$command: the dry run of its dry run differs"; diff out.txt "$command.ini"; }
done
# A dry run checks what a run checks: an existing output is refused.
touch exists.h5
mft_run 1 train "${small[@]}" --output.file exists.h5 --dry-run
[ "$status" -eq 2 ] && grep -q "continue its run with mft train --restart exists.h5" err.txt ||
  { fail "--dry-run with an existing output: exit $status"; cat err.txt; }
rm -f exists.h5
# A dry run of a restart: the file's keys, the restart point; the file untouched.
mft_run 2 train "${small[@]}" --output.file r.h5
before=$(md5sum <r.h5)
mft_run 2 train --restart r.h5 --train.steps 4 --dry-run
[ "$status" -eq 0 ] && grep -q "^# restart from r.h5: step 2" out.txt && grep -q "^steps = 4$" out.txt &&
  grep -q "^heads = 3$" out.txt || { fail "--restart --dry-run: exit $status"; cat out.txt err.txt; }
[ "$(md5sum <r.h5)" = "$before" ] || fail "a dry run changed the file it would restart"
rm -f r.h5

# output.log: JSON lines, a row per progress line, appended by a restart.
mft_run 2 train "${small[@]:0:8}" --train.dtau 0.01 --train.steps 4 --train.print_every 2 --data.test_sequences 3 \
  --output.file log.h5 --output.log run.jsonl
mft_run 2 train --restart log.h5 --train.steps 6 --output.log run.jsonl
"$PYTHON" - <<'PY' || { fail "output.log"; cat run.jsonl; }
import json, h5py
events = [json.loads(line) for line in open("run.jsonl")]
assert [e["event"] for e in events] == ["start", "row", "row", "row", "end", "start", "row", "row", "end"], events
rows = [e for e in events if e["event"] == "row"]
history = h5py.File("log.h5", "r")["history"]
for e in rows:  # the numbers of the file's history rows, to the last bit
    i = list(history["step"][:]).index(e["step"])
    assert e["risk"] == history["risk"][i] and e["tau"] == history["tau"][i], (e, i)
assert "test_risk" in rows[0] and rows[1]["seconds_per_step"] > 0
assert events[4] == {**events[4], "status": "done", "step": 4} and events[5]["restart"] == "log.h5"
assert events[-1]["status"] == "done" and events[-1]["step"] == 6
print("output.log:", len(events), "events")
PY
rm -f log.h5 run.jsonl
mft_run 1 train "${small[@]}" --output.file o.h5 --output.log /nonexistent/run.jsonl
[ "$status" -eq 2 ] && grep -q "^mft: error: output.log = /nonexistent/run.jsonl: its folder" err.txt ||
  { fail "output.log in a missing folder: exit $status"; cat err.txt; }
nothing_written "output.log in a missing folder"

# On a CPU without what the program was compiled for: one line naming the
# missing features, exit 1, before anything runs (MFT_CPU_ABSENT pretends;
# mft --version lists the features the build uses).
compiled=$("$MFT" --version | sed -n 's/^CPU features it was compiled to use: *//p')
MFT_CPU_ABSENT="$compiled" "$MFT" --version >out.txt 2>err.txt
status=$?
if [ -z "$compiled" ] || [ "$compiled" = "none beyond x86-64" ]; then
  [ "$status" -eq 0 ] || { fail "a build using no extra CPU feature refused this CPU: exit $status"; cat err.txt; }
else
  [ "$status" -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^mft: error: this CPU (.*) lacks $compiled, .*MFT_ARCH=" err.txt &&
    [ ! -s out.txt ] || { fail "MFT_ARCH=${MFT_ARCH:-native} on a CPU without $compiled: exit $status"; cat out.txt err.txt; }
  echo "refused: $(cat err.txt)"
fi
MFT_CPU_ABSENT="" "$MFT" --version >out.txt 2>err.txt || fail "mft --version on this CPU: exit $?"

# Under Slurm the memory limit follows the job's allocation (this test's own
# job, if it runs in one, is left out).
unset SLURM_MEM_PER_NODE SLURM_MEM_PER_CPU SLURM_CPUS_PER_TASK
mft_run 2 train "${small[@]}" --output.file o.h5 --dry-run
grep -q "shared by the node's 2 ranks" out.txt || fail "the memory limit is not MemAvailable's share"
SLURM_MEM_PER_NODE=2048 mft_run 2 train "${small[@]}" --output.file o.h5 --dry-run
grep -q "limit 1.0 GiB: Slurm's --mem 2.0 GiB shared by the node's 2 ranks" out.txt ||
  { fail "SLURM_MEM_PER_NODE=2048 did not set the limit"; grep memory out.txt; }
SLURM_MEM_PER_CPU=300 SLURM_CPUS_PER_TASK=2 mft_run 1 train "${small[@]}" --output.file o.h5 --dry-run
grep -q "limit 600 MiB: Slurm's --mem-per-cpu 300 MiB x 2 CPUs of a task" out.txt ||
  { fail "SLURM_MEM_PER_CPU=300 x 2 did not set the limit"; grep memory out.txt; }
SLURM_MEM_PER_NODE=64 mft_run 2 train "${small[@]}" --output.file o.h5
[ "$status" -eq 2 ] && grep -q "Slurm's --mem 64 MiB" err.txt || { fail "a run over Slurm's --mem ran"; cat err.txt; }
nothing_written "a run over Slurm's --mem"
finish

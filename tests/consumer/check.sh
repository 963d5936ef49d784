#!/usr/bin/env bash
# The installed package: `cmake --install` into a temporary prefix, then
# (1) a consumer project with find_package(mft) and #include <mft/mft.hpp>
# builds and runs, (2) PREFIX/bin/mft train --help runs, (3) the Python package
# imports from PREFIX and its commands run, also under a python3 from PATH
# that is not $PYTHON (a virtual environment), (4) pip installs the package
# from the source tree into that environment without network. Arguments:
# the build tree and the source tree; $PYTHON has numpy, h5py, matplotlib.
set -u
build=${1:?build tree} source=${2:?source tree}
work=$(mktemp -d /tmp/mft-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; }
libdir=lib
[ -d "$prefix/lib64/cmake/mft" ] && libdir=lib64 # GNUInstallDirs on RHEL and SUSE
for f in bin/mft bin/mft-bench bin/mft-plot-history bin/mft-collect-sweep bin/mft-sweep include/mft/mft.hpp \
         include/mft/core/version.hpp $libdir/cmake/mft/mftConfig.cmake $libdir/libmft_core.a \
         lib/python3/dist-packages/mft/io.py; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done
echo "installed under $prefix: $(cd "$prefix" && find . -type f | wc -l) files"
# The documents as in the checkout: every relative link of the installed
# README and docs resolves there, and the help of an installed command
# names the command, not a checkout's script.
doc=$prefix/share/doc/mft
for f in README.md docs/GUIDE.md docs/FORMAT.md docs/MODEL.md docs/OPERATIONS.md examples/teacher.ini; do
  [ -e "$doc/$f" ] || fail "the install has no share/doc/mft/$f"
done
"$PYTHON" "$source/tests/docs/check_docs.py" "$doc" || fail "a link of the installed documents does not resolve"
"$prefix/bin/mft-plot-history" --help >"$work/help.txt" 2>&1 || fail "PREFIX/bin/mft-plot-history --help"
grep -q "scripts/" "$work/help.txt" && { grep "scripts/" "$work/help.txt"; fail "an installed command's help names a checkout script"; }
grep -q "^  mft-plot-history RUN.h5" "$work/help.txt" || { cat "$work/help.txt"; fail "mft-plot-history --help does not name itself"; }

cmake -S "$source/tests/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure the consumer"; }
cmake --build "$work/consumer" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build the consumer"; }
out=$("$MPIEXEC" -n 2 "$work/consumer/consumer" 2>&1) || { echo "$out"; fail "the consumer on 2 ranks"; }
echo "$out"
grep -q "R = " <<<"$out" || fail "the consumer printed no risk"

help=$("$prefix/bin/mft" train --help 2>&1) || fail "PREFIX/bin/mft train --help: exit $?"
grep -q "parallel.sequence_groups" <<<"$help" || fail "PREFIX/bin/mft train --help lists no keys"
echo "PREFIX/bin/mft train --help: $(wc -l <<<"$help") lines"

(cd "$work" && "$MPIEXEC" -n 1 "$prefix/bin/mft" forward --data.sequences 4 --model.heads 2 --model.slices 2 \
  --output.file run.h5 >/dev/null 2>&1) || fail "PREFIX/bin/mft forward"
PYTHONPATH="$prefix/lib/python3/dist-packages" "$PYTHON" -c "
import mft.io, sys
run = mft.io.open_run('$work/run.h5')
assert run.config['model.heads'] == 2, run.config
print('python package from the prefix:', mft.io.__file__)
" || fail "import mft.io from the prefix"
"$prefix/bin/mft-compare-runs" --help >/dev/null 2>&1 || fail "PREFIX/bin/mft-compare-runs --help"
"$prefix/bin/mft-collect-sweep" "$work/run.h5" >"$work/collect.txt" 2>&1 && fail "mft-collect-sweep took a forward run"
grep -q "no /history" "$work/collect.txt" || { cat "$work/collect.txt"; fail "mft-collect-sweep: not its one-line refusal"; }
"$prefix/bin/mft-sweep" grid model.heads=2,4 init.seed=1:2 >"$work/grid.csv" 2>&1 || fail "PREFIX/bin/mft-sweep grid"
[ "$(grep -vc '^#' "$work/grid.csv")" = 5 ] || { cat "$work/grid.csv"; fail "mft-sweep grid: not a header and 4 rows"; }

# (3) The installed commands run `python3` from PATH when MFT_PYTHON is unset:
# here a virtual environment's, which says it ran by writing a marker file.
(cd "$work" && "$MPIEXEC" -n 1 "$prefix/bin/mft" train --data.sequences 4 --model.heads 2 --model.slices 2 \
  --train.steps 3 --train.dtau 0.01 --output.file train.h5 >/dev/null 2>&1) || fail "PREFIX/bin/mft train"
venv=$work/venv
"$PYTHON" -m venv --system-site-packages "$venv" >"$work/venv.log" 2>&1 || { cat "$work/venv.log"; fail "python3 -m venv"; }
site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "import os; os.environ.get('MFT_MARKER') and open(os.environ['MFT_MARKER'], 'w').close()" >"$site/mft_marker.pth"
out=$(env -u MFT_PYTHON PATH="$venv/bin:$PATH" MFT_MARKER="$work/ran-in-venv" MPLBACKEND=Agg \
      "$prefix/bin/mft-plot-history" "$work/train.h5" -o "$work/history.png" 2>&1) \
  || { echo "$out"; fail "PREFIX/bin/mft-plot-history under the venv's python3"; }
[ -f "$work/ran-in-venv" ] || fail "PREFIX/bin/mft-plot-history did not run the python3 of PATH ($venv/bin)"
[ -s "$work/history.png" ] || fail "PREFIX/bin/mft-plot-history wrote no figure"
echo "PREFIX/bin/mft-plot-history ran under $venv/bin/python3"

# (4) pip, offline, from a copy of the source tree's package (the build
# writes its egg-info next to pyproject.toml).
mkdir -p "$work/src" && cp -r "$source/scripts/pyproject.toml" "$source/scripts/mft" "$work/src/"
"$venv/bin/python" -m pip install --no-build-isolation --no-deps --no-index "$work/src" >"$work/pip.log" 2>&1 \
  || { cat "$work/pip.log"; fail "pip install the package"; }
where=$(cd "$work" && "$venv/bin/python" -c "import mft; print(mft.__version__, mft.__file__)")
version=$(sed -n 's/^project(mft VERSION \([0-9.]*\).*/\1/p' "$source/CMakeLists.txt")
[[ "$where" == "$version $site/mft/__init__.py" ]] || fail "pip's mft: '$where', expected version $version under $site"
out=$(env -u MFT_PYTHON MPLBACKEND=Agg "$venv/bin/mft-plot-history" "$work/train.h5" -o "$work/pip.png" 2>&1) \
  || { echo "$out"; fail "the venv's mft-plot-history (pip's entry point)"; }
[ -s "$work/pip.png" ] || fail "pip's mft-plot-history wrote no figure"
echo "pip installed mft $version into $venv"

# (5) share/mft: the batch scripts run from any folder, here without Slurm
# (run-mft.sh starts mft directly), with a site file sourced first.
for f in env.sh site-env.example.sh make_digits.py make_permutation_pairs.py experiments/common.py experiments/icl.py \
         experiments/causal.py \
         slurm/train.sbatch slurm/sweep.sbatch slurm/collect.sbatch slurm/run-mft.sh slurm/submit_sweep.sh \
         slurm/sbatch.sh slurm/options.sh slurm/site-options.example; do
  [ -e "$prefix/share/mft/$f" ] || fail "the install has no share/mft/$f"
done
grep -q "^scripts=\${MFT_SCRIPTS:-$prefix/share/mft}" "$prefix/share/mft/slurm/train.sbatch" ||
  fail "the installed train.sbatch does not name $prefix/share/mft"
mkdir -p "$work/job"
echo "touch '$work/site-sourced'" >"$work/site.sh"
out=$(cd "$work/job" && env -u MFT_ROOT MFT_SITE_ENV="$work/site.sh" MFT_OUTPUT=runs/job.h5 SLURM_NTASKS=1 \
      bash "$prefix/share/mft/slurm/train.sbatch" --model.heads 2 --model.slices 2 --data.sequences 4 \
      --train.steps 2 --train.dtau 0.01 2>&1) || { echo "$out"; fail "PREFIX/share/mft/slurm/train.sbatch"; }
[ -f "$work/job/runs/job.h5" ] || { echo "$out"; fail "the installed train.sbatch wrote no runs/job.h5"; }
[ -f "$work/site-sourced" ] || fail "MFT_SITE_ENV was not sourced"
echo "PREFIX/share/mft/slurm/train.sbatch ran mft: $(grep -c '^mft-job: done' <<<"$out") done line"
echo "all checks passed"

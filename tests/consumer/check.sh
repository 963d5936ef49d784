#!/usr/bin/env bash
# The installed package: `cmake --install` into a temporary prefix, then
# (1) a consumer project with find_package(mft) and #include <mft/mft.hpp>
# builds and runs, (2) PREFIX/bin/mft --help runs, (3) the Python package
# imports from PREFIX and its commands run. Arguments: the build tree and
# the source tree.
set -u
build=${1:?build tree} source=${2:?source tree}
work=$(mktemp -d /tmp/mft-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "cmake --install"; }
libdir=lib
[ -d "$prefix/lib64/cmake/mft" ] && libdir=lib64 # GNUInstallDirs on RHEL and SUSE
for f in bin/mft bin/mft-bench bin/mft-plot-history bin/mft-collect-sweep include/mft/mft.hpp \
         include/mft/core/version.hpp $libdir/cmake/mft/mftConfig.cmake $libdir/libmft_core.a \
         lib/python3/dist-packages/mft/io.py; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done
echo "installed under $prefix: $(cd "$prefix" && find . -type f | wc -l) files"

cmake -S "$source/tests/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure the consumer"; }
cmake --build "$work/consumer" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build the consumer"; }
out=$("$MPIEXEC" -n 2 "$work/consumer/consumer" 2>&1) || { echo "$out"; fail "the consumer on 2 ranks"; }
echo "$out"
grep -q "R = " <<<"$out" || fail "the consumer printed no risk"

help=$("$prefix/bin/mft" --help 2>&1) || fail "PREFIX/bin/mft --help: exit $?"
grep -q "parallel.sequence_groups" <<<"$help" || fail "PREFIX/bin/mft --help lists no keys"
echo "PREFIX/bin/mft --help: $(wc -l <<<"$help") lines"

(cd "$work" && "$MPIEXEC" -n 1 "$prefix/bin/mft" forward --data.sequences 4 --model.heads 2 --model.slices 2 \
  --output.file run.h5 >/dev/null 2>&1) || fail "PREFIX/bin/mft forward"
PYTHONPATH="$prefix/lib/python3/dist-packages" /usr/bin/python3 -c "
import mft.io, sys
run = mft.io.open_run('$work/run.h5')
assert run.config['model.heads'] == 2, run.config
print('python package from the prefix:', mft.io.__file__)
" || fail "import mft.io from the prefix"
"$prefix/bin/mft-compare-runs" --help >/dev/null 2>&1 || fail "PREFIX/bin/mft-compare-runs --help"
"$prefix/bin/mft-collect-sweep" "$work/run.h5" >"$work/collect.txt" 2>&1 && fail "mft-collect-sweep took a forward run"
grep -q "no /history" "$work/collect.txt" || { cat "$work/collect.txt"; fail "mft-collect-sweep: not its one-line refusal"; }
echo "all checks passed"

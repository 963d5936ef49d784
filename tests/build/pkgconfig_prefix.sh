#!/usr/bin/env bash
# A build where PETSc is found only through PKG_CONFIG_PATH, as on a cluster
# whose PETSc module sits in a prefix of its own: the system's pkg-config
# folders are hidden (PKG_CONFIG_LIBDIR), PETSc's .pc file is rewritten to
# a prefix that mirrors the real one, and mft is configured (MFT_ARCH=
# portable, no tests) and its core layer built against it. Without
# PKG_CONFIG_PATH the same configure must fail, naming PETSc.
# Arguments: the source tree.
set -u
source=${1:?source tree}
work=$(mktemp -d /tmp/mft-pkgconfig-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

real_pc=$(pkg-config --variable=pcfiledir PETSc)/PETSc.pc
[ -f "$real_pc" ] || fail "no PETSc.pc found by pkg-config to mirror"
real_prefix=$(pkg-config --variable=prefix PETSc)
prefix=$work/petsc-module
mkdir -p "$prefix/lib/pkgconfig" "$work/empty"
ln -s "$real_prefix/include" "$prefix/include"
for lib in "$real_prefix"/lib/*; do [ -e "$prefix/lib/$(basename "$lib")" ] || ln -s "$lib" "$prefix/lib/"; done
sed "s#^prefix=.*#prefix=$prefix#" "$real_pc" >"$prefix/lib/pkgconfig/PETSc.pc"

configure() { # BUILD [env assignments...]
  local build=$1
  shift
  env "$@" PKG_CONFIG_LIBDIR="$work/empty" cmake -S "$source" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DMFT_BUILD_TESTS=OFF -DMFT_ARCH=portable >"$build.log" 2>&1
}
configure "$work/hidden" -u PKG_CONFIG_PATH -u CMAKE_PREFIX_PATH -u PETSC_DIR -u PETSC_ARCH || true
grep -q "PETSc" "$work/hidden.log" && ! grep -q "Build files have been written" "$work/hidden.log" ||
  { tail -20 "$work/hidden.log"; fail "configured without PETSc's .pc on the search path"; }
echo "without PKG_CONFIG_PATH: refused ($(grep -m1 -i "petsc" "$work/hidden.log"))"

configure "$work/module" -u CMAKE_PREFIX_PATH -u PETSC_DIR -u PETSC_ARCH PKG_CONFIG_PATH="$prefix/lib/pkgconfig" ||
  { tail -30 "$work/module.log"; fail "configure with PKG_CONFIG_PATH=$prefix/lib/pkgconfig"; }
grep -q "$prefix/include" "$work/module/CMakeCache.txt" ||
  fail "the configured build does not take PETSc's headers from $prefix/include"
echo "configured with PETSc from $prefix (PKG_CONFIG_PATH only)"
cmake --build "$work/module" --target mft_core -j 2 >"$work/build.log" 2>&1 ||
  { tail -30 "$work/build.log"; fail "build of mft_core against the PETSc of PKG_CONFIG_PATH"; }
echo "built mft_core against it"
echo "all checks passed"

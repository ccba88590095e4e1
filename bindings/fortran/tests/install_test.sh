#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a fresh temporary prefix and builds the Fortran example against it as
# an outside user would (tests/consumer): once through find_package(xfer) and xfer::fortran (the
# installed module and libxfer_fortran.a), once by compiling the installed sources
# (share/xfer/fortran); runs both on `host` from a folder that is neither the build nor the prefix.
# Usage: install_test.sh <build dir> <work dir> <libdir> <includedir> <datadir> <cmake> <consumer dir> <example.f90> <Fortran compiler>
set -euo pipefail
build=$1 work=$2 libdir=$3 includedir=$4 datadir=$5 cmake=$6 consumer=$7 example=$8 fc=$9
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for f in "$includedir/xfer/fortran/xfer.mod" "$libdir/libxfer_fortran.a" "$datadir/xfer/fortran/xfer.f90" \
         "$datadir/xfer/fortran/xfer_view_body.inc" "$libdir/cmake/xfer/xferTargets.cmake"; do
  [ -e "$prefix/$f" ] || fail "missing from the install: $f"
done
grep -q 'xfer::fortran' "$prefix/$libdir/cmake/xfer/xferTargets.cmake" || fail "xferTargets.cmake does not define xfer::fortran"

elsewhere="$work/elsewhere"
mkdir -p "$elsewhere"
cd "$elsewhere"
export XFER_BACKEND=host
unset XFER_PLUGIN_PATH XFER_CONFIG

"$cmake" -S "$consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" -DEXAMPLE_SOURCE="$example" \
  -DXFER_FORTRAN_SOURCES="$prefix/$datadir/xfer/fortran" -DCMAKE_Fortran_COMPILER="$fc" \
  >"$work/consumer-configure.log" || { cat "$work/consumer-configure.log"; fail "configure the Fortran consumer"; }
grep 'xfer::fortran was compiled by' "$work/consumer-configure.log" || true
"$cmake" --build "$work/consumer-build" >"$work/consumer-build.log" \
  || { cat "$work/consumer-build.log"; fail "build the Fortran consumer"; }
for program in example_module example_sources; do
  out=$("$work/consumer-build/$program")
  echo "$program: $out"
  [ "$out" = "fortran: 131072 doubles round-tripped intact" ] || fail "$program: $out"
done
echo "PASS: Fortran install: xfer::fortran and the installed sources, built and run on host"

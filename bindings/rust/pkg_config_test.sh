#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Rust binding against an installed xfer, as a user meets it: installs the build into a fresh
# prefix, then builds and runs the `roundtrip` example from another folder with PKG_CONFIG_PATH
# as the only variable that finds xfer (no XFER_LIB_DIR, no LD_LIBRARY_PATH), and checks that the binary's
# RUNPATH names the prefix's libdir.
# Usage: pkg_config_test.sh <build dir> <work dir> <libdir (CMAKE_INSTALL_LIBDIR)> <cmake> <cargo> <Cargo.toml>
set -euo pipefail
build=$1 work=$2 libdir=$3 cmake=$4 cargo=$5 manifest=$6
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work/prefix" "$work/elsewhere"
mkdir -p "$work/elsewhere"
prefix="$work/prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" \
  || { cat "$work/install.log"; fail "cmake --install"; }

cd "$work/elsewhere"
unset XFER_LIB_DIR LD_LIBRARY_PATH PKG_CONFIG_LIBDIR XFER_PLUGIN_PATH XFER_CONFIG
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
out=$("$cargo" run --offline --locked --quiet --example roundtrip --manifest-path "$manifest" \
        --target-dir "$work/target") || fail "cargo run --example roundtrip against $prefix"
echo "cargo run: $out"
[ "$out" = "rust: 4194304 f32 round-tripped intact on host" ] || fail "unexpected output: $out"
runpath=$(readelf -d "$work/target/debug/examples/roundtrip" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
want=$(cd "$prefix/$libdir" && pwd -P)
case ":$runpath:" in
  *":$want:"*) echo "ok: RUNPATH $runpath" ;;
  *) fail "the example's RUNPATH '$runpath' does not name $want" ;;
esac
echo "PASS: the Rust binding builds and runs against $prefix through pkg-config alone"

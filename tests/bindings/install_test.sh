#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build into a fresh temporary prefix and uses it as an outside user would:
#   1. the layout (headers, libxfer.so.1, lib/xfer/ plugins, xfer-tool, CMake package, xfer.pc,
#      LICENSE) is there and nothing tool-private sits in the public lib/;
#   2. no installed binary carries a build-machine path in its RUNPATH;
#   3. a C program built with find_package(xfer CONFIG) and one built with pkg-config run on
#      `host` from another folder, and the installed xfer-tool finds the installed plugins.
# Usage: install_test.sh <build dir> <work dir> <libdir (CMAKE_INSTALL_LIBDIR)> <cmake> <example.c> <consumer dir> <C compiler>
set -euo pipefail
build=$1 work=$2 libdir=$3 cmake=$4 example=$5 consumer=$6 cc=$7
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }

for f in include/xfer/xfer.h include/xfer/xfer_backend.h "$libdir/libxfer.so" "$libdir/libxfer.so.1" \
         "$libdir/xfer/libxfer-backend-host.so" "$libdir/xfer/xfer-plugin-check" bin/xfer-tool \
         "$libdir/cmake/xfer/xferConfig.cmake" "$libdir/cmake/xfer/xferConfigVersion.cmake" \
         "$libdir/cmake/xfer/xferTargets.cmake" "$libdir/pkgconfig/xfer.pc" share/doc/xfer/LICENSE; do
  [ -e "$prefix/$f" ] || fail "missing from the install: $f"
done
if ls "$prefix/$libdir" | grep -q '^libxfer-tool'; then
  fail "tool-private library in the public $libdir/: $(ls "$prefix/$libdir" | grep '^libxfer-tool')"
fi

# RUNPATH entries of every installed ELF file must be $ORIGIN-relative.
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q 'ELF' || continue
  rp=$(readelf -d "$f" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
  [ -z "$rp" ] && continue
  IFS=: read -ra entries <<<"$rp"
  for e in "${entries[@]}"; do
    case "$e" in
      '$ORIGIN'*) ;;
      *) fail "${f#$prefix/} has RUNPATH entry '$e' (RUNPATH $rp): installed files must not name build-machine paths" ;;
    esac
  done
  echo "ok: ${f#$prefix/} RUNPATH $rp"
done < <(find "$prefix" -type f -print0)

# Run from a folder that is neither the build nor the prefix: nothing may depend on the cwd.
elsewhere="$work/elsewhere"
mkdir -p "$elsewhere"
cd "$elsewhere"
export XFER_BACKEND=host
unset XFER_PLUGIN_PATH XFER_CONFIG

# find_package(xfer CONFIG)
"$cmake" -S "$consumer" -B "$work/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DEXAMPLE_SOURCE="$example" -DCMAKE_C_COMPILER="$cc" >"$work/consumer-configure.log" \
  || { cat "$work/consumer-configure.log"; fail "configure with find_package(xfer CONFIG)"; }
"$cmake" --build "$work/consumer-build" >"$work/consumer-build.log" \
  || { cat "$work/consumer-build.log"; fail "build with find_package(xfer CONFIG)"; }
out=$("$work/consumer-build/example_roundtrip" 3000001)
echo "find_package: $out"
[ "$out" = "host: 3000001 bytes round-tripped intact" ] || fail "find_package program: $out"

# The version file accepts 1.0 and refuses another major version.
cat >"$work/version-check.cmake" <<CM
foreach(asked 1.0 2.0 0.9)
  string(REPLACE "." ";" parts "\${asked}")
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  set(PACKAGE_FIND_VERSION "\${asked}")
  include("$prefix/$libdir/cmake/xfer/xferConfigVersion.cmake")
  message(STATUS "find_package(xfer \${asked}): compatible=\${PACKAGE_VERSION_COMPATIBLE} (version \${PACKAGE_VERSION})")
  if(asked STREQUAL "1.0" AND NOT PACKAGE_VERSION_COMPATIBLE)
    message(FATAL_ERROR "xfer \${PACKAGE_VERSION} refused a request for 1.0")
  elseif(NOT asked STREQUAL "1.0" AND PACKAGE_VERSION_COMPATIBLE)
    message(FATAL_ERROR "xfer \${PACKAGE_VERSION} accepted a request for \${asked}")
  endif()
endforeach()
CM
"$cmake" -P "$work/version-check.cmake" || fail "CMake version file"

# pkg-config
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
flags=$(pkg-config --cflags --libs xfer) || fail "pkg-config xfer"
pc_libdir=$(pkg-config --variable=libdir xfer)
[ "$(cd "$pc_libdir" && pwd -P)" = "$(cd "$prefix/$libdir" && pwd -P)" ] || fail "xfer.pc libdir $pc_libdir is not $prefix/$libdir"
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Wextra -Werror -pedantic "$example" -o "$work/example_pkgconfig" $flags -Wl,-rpath,"$pc_libdir"
out=$("$work/example_pkgconfig" 1234567)
echo "pkg-config: $out"
[ "$out" = "host: 1234567 bytes round-tripped intact" ] || fail "pkg-config program: $out"

# The installed tool finds the installed plugins (lib/xfer/ next to libxfer.so).
"$prefix/bin/xfer-tool" list >"$work/list.txt" 2>&1 || { cat "$work/list.txt"; fail "installed xfer-tool list"; }
grep -q "$prefix/$libdir/xfer/libxfer-backend-host.so" "$work/list.txt" || { cat "$work/list.txt"; fail "installed xfer-tool did not list the installed host plugin"; }
echo "PASS: install layout, RUNPATHs, find_package, pkg-config, installed xfer-tool"

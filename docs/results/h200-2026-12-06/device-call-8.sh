#!/usr/bin/env bash
# Device call 8 (2026-12-06): whether the reuse row's H2D shortfall comes with the process or
# with the path. `pageable-user-reuse20-h2d-64MiB` alone in a fresh process, twice; after the
# first-copy rows; reuse-probe.c at 64 MiB H2D in its own process. Packed into c8.tgz.
set -u
OUT=${1:?out}; N=${2:-c8}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > "$O/machine.txt" 2>&1; cat "$O/machine.txt"
"$T" calibrate > /dev/null 2>&1
for i in 1 2; do
    timeout 40 "$T" bench -t 'pageable-user-reuse20-h2d-64MiB' -r 5 > "$O/alone-$i.txt" 2>&1
    echo "alone $i: $(grep -E '^pageable-user' "$O/alone-$i.txt")"
done
timeout 60 "$T" bench -t 'pageable-user-once-h2d-*,pageable-user-reuse20-h2d-64MiB' -r 5 > "$O/after-once.txt" 2>&1
echo "after once:"; grep -E '^pageable-user' "$O/after-once.txt"
timeout 40 "$B/bin/reuse-probe" 64 h2d > "$O/reuse-probe-64-h2d.txt" 2>&1
cut -c1-70 "$O/reuse-probe-64-h2d.txt"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

#!/usr/bin/env bash
# Device call 5 (2026-12-06): reuse-probe.c (per-copy times of one user array copied 20 times,
# beside a cudaHostAlloc buffer) at 64 MiB and 1 GiB, H2D and D2H; at 64 MiB H2D again with the
# staging engine's lingering workers off (XFER_PAGEABLE_STAGING_LINGER_US=0). Packed into c5.tgz.
set -u
OUT=${1:?out}; N=${2:-c5}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
for a in "64 h2d" "1024 h2d" "64 d2h" "1024 d2h"; do
    timeout 60 "$B/bin/reuse-probe" $a > "$O/reuse-probe-${a/ /-}.txt" 2>&1; echo "probe $a exit=$?"
done
XFER_PAGEABLE_STAGING_LINGER_US=0 timeout 60 "$B/bin/reuse-probe" 64 h2d > "$O/reuse-probe-64-h2d-nolinger.txt" 2>&1
echo "probe nolinger exit=$?"
XFER_LOG=copies XFER_LOG_FILE="$O/log-probe.txt" timeout 60 "$B/bin/reuse-probe" 64 h2d > "$O/reuse-probe-64-h2d-log.txt" 2>&1
cd "$O" && for f in reuse-probe-*.txt; do echo "== $f"; cut -c1-400 "$f"; done
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

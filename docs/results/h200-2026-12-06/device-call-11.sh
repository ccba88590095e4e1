#!/usr/bin/env bash
# Device call 11 (2026-12-06): whether DMAs from a page-locked user array slow down while other
# cores hold its lines in their caches, and what gives the rate back (snoop-probe.c), at 64 and
# 256 MiB. Packed into c11.tgz.
set -u
OUT=${1:?out}; N=${2:-c11}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
{
    nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader
    lscpu | grep -E "NUMA|Socket|Model name|L2|L3"
    grep -o -w -E "cldemote|clflushopt|clwb" /proc/cpuinfo | sort | uniq -c
} > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
for mib in 64 256; do
    timeout 100 "$B/bin/snoop-probe" $mib > "$O/snoop-probe-$mib.txt" 2>&1; echo "snoop-probe $mib exit=$?"
    cut -c1-120 "$O/snoop-probe-$mib.txt"
done
timeout 60 "$B/bin/snoop-probe" 64 4 > "$O/snoop-probe-64-r4.txt" 2>&1; echo "snoop-probe 64 r4 exit=$?"
cut -c1-120 "$O/snoop-probe-64-r4.txt"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

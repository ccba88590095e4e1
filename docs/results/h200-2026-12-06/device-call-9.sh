#!/usr/bin/env bash
# Device call 9 (2026-12-06): whether the way a user array gets page-locked changes the DMA rate
# from it afterwards (register-probe.c), beside the reuse probe, with the machine's transparent
# huge page and NUMA settings. Packed into c9.tgz.
set -u
OUT=${1:?out}; N=${2:-c9}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
{
    nvidia-smi --query-gpu=name,uuid --format=csv,noheader
    echo "thp enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
    echo "thp defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"
    echo "numa_balancing: $(cat /proc/sys/kernel/numa_balancing 2>/dev/null)"
    lscpu | grep -E "NUMA|Socket|Model name"
    nvidia-smi topo -m 2>&1 | head -6
} > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
timeout 60 "$B/bin/register-probe" 64 > "$O/register-probe-64.txt" 2>&1; echo "register-probe exit=$?"
cut -c1-110 "$O/register-probe-64.txt"
timeout 60 "$B/bin/reuse-probe" 64 h2d > "$O/reuse-probe-64-h2d.txt" 2>&1; echo "reuse-probe exit=$?"
cut -c1-110 "$O/reuse-probe-64-h2d.txt"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

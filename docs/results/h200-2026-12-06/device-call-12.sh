#!/usr/bin/env bash
# Device call 12 (2026-12-06): the proof of the code that demotes the source lines of a staged copy
# of a range being page-locked, and page-locks a buffer's host view from its first copy.
# `xfer-tool calibrate`; gpu-check; the pageable stress test with two seeds; the user-memory bench
# rows; the snoop probe at 64 MiB. Packed into c12.tgz (or the name given second).
set -u
OUT=${1:?out}; N=${2:-c12}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
{
    nvidia-smi --query-gpu=name,uuid,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
    lscpu | grep -E "NUMA|Socket|Model name|L2|L3"
} > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
{ time "$T" calibrate; echo "exit $?"; } > "$O/calibrate.txt" 2>&1
head -3 "$O/calibrate.txt"
"$T" list > "$O/list.txt" 2>&1
grep -E "registration_min|staged_min" "$O/list.txt" | cut -c1-110
timeout 260 tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 170 > "$O/gpu-check.log" 2>&1
echo "gpu-check exit=$?"; tail -n 17 "$O/gpu-check.log"
for seed in 20261206 7; do
    timeout 60 "$B/bin/xfer_stress" --backend pageable --threads 8 --ops 300 --max-bytes 1048576 --seed $seed \
        >> "$O/stress-pageable.txt" 2>&1
    echo "stress pageable seed $seed exit=$?"
done
timeout 130 "$T" bench -t 'pageable-user-*' -r 5 > "$O/bench-user.txt" 2>&1
echo "bench exit=$?"; grep -E "^pageable-|targets" "$O/bench-user.txt" | cut -c1-150
timeout 40 "$B/bin/snoop-probe" 64 > "$O/snoop-probe-64.txt" 2>&1; echo "snoop-probe exit=$?"
cut -c1-100 "$O/snoop-probe-64.txt"
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

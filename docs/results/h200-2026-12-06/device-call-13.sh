#!/usr/bin/env bash
# Device call 13 (2026-12-06): the GPU tests of user memory; the mixed workload (every workflow on the pageable backend's buffers
# with the default choice and each fixed one, mix_compare.py); the user-memory bench rows; the small
# one-off rows with the path forced to the driver, and with the copy log; the pageable backend's
# buffer rows (against pinned, after a gap, overlap, the call's host time). Packed into c13.tgz.
set -u
OUT=${1:?out}; N=${2:-c13}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
R=$PWD/docs/results/h200-2026-12-06
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
{
    nvidia-smi --query-gpu=name,uuid,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
    lscpu | grep -E "NUMA|Socket|Model name|L2|L3"
} > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
{ time "$T" calibrate; echo "exit $?"; } > "$O/calibrate.txt" 2>&1
head -3 "$O/calibrate.txt"
timeout 120 "$B/bin/xfer_cuda_tests" --gtest_filter='GpuUserMemory.*' > "$O/gpu-user-memory.txt" 2>&1
echo "GpuUserMemory exit=$?"; tail -n 3 "$O/gpu-user-memory.txt"
for p in auto staged driver registered; do
    XFER_PAGEABLE_PATH=$p timeout 70 "$T" run all --backend pageable --quick -f json -o "$O/mix-$p.json" \
        > /dev/null 2> "$O/mix-$p.err"
    echo "mix $p exit=$?"
done
python3 "$R/mix_compare.py" "$O" | tee "$O/mix-compare.txt"
timeout 130 "$T" bench -t 'pageable-user-*' -r 5 > "$O/bench-user.txt" 2>&1
echo "bench user exit=$?"; grep -E "^pageable-|targets" "$O/bench-user.txt" | grep -v ": FAIL" | cut -c1-110
small='pageable-user-once-*-4KiB,pageable-user-once-*-64KiB,pageable-user-once-*-1MiB'
XFER_PAGEABLE_PATH=driver timeout 40 "$T" bench -t "$small" -r 5 > "$O/bench-once-driver.txt" 2>&1
echo "bench once driver exit=$?"; grep -E "^pageable-" "$O/bench-once-driver.txt" | grep -v ": FAIL" | cut -c1-110
XFER_LOG=copies timeout 30 "$T" bench -t 'pageable-user-once-d2h-64KiB,pageable-user-once-h2d-1MiB' -r 3 \
    > "$O/log-once.txt" 2>&1
echo "log exit=$?"
rows='pageable-pinned-*,pageable-gap-*,pageable-work-gap-*,pageable-overlap,pageable-async-*'
timeout 150 "$T" bench -t "$rows" -r 5 > "$O/bench-pageable.txt" 2>&1
echo "bench pageable exit=$?"; grep -E "^pageable-|targets" "$O/bench-pageable.txt" | grep -v ": FAIL" | cut -c1-110
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

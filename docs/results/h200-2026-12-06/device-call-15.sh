#!/usr/bin/env bash
# Device call 15 (2026-12-06): the proof of the final code: gpu-check; the pageable stress test
# with the seed that found a host-to-host copy refused for straddling a view page-locked meanwhile,
# and five more; the one-off rows measured with the raw call copying, in every other pair, the
# array xfer had just copied (xfer-tool-before, the bench built from 81cd375) and with each side
# copying a fresh array, alternating; the user-memory rows. Packed into c15.tgz.
set -u
OUT=${1:?out}; N=${2:-c15}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader > "$O/machine.txt" 2>&1; cat "$O/machine.txt"
{ time "$T" calibrate; echo "exit $?"; } > "$O/calibrate.txt" 2>&1
head -3 "$O/calibrate.txt"
"$T" list > "$O/list.txt" 2>&1
timeout 260 tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 170 > "$O/gpu-check.log" 2>&1
echo "gpu-check exit=$?"; tail -n 17 "$O/gpu-check.log"
for seed in 20261206 11 12 13 14 15; do
    timeout 60 "$B/bin/xfer_stress" --backend pageable --threads 8 --ops 300 --max-bytes 1048576 --seed $seed \
        >> "$O/stress-pageable.txt" 2>&1
    echo "stress pageable seed $seed exit=$?"
done
for k in 1 2; do
    for side in before now; do
        tool=$T; [ $side = before ] && tool=$B/bin/xfer-tool-before
        timeout 60 "$tool" bench -t 'pageable-user-once-*' -r 5 > "$O/once-$side-$k.txt" 2>&1
        echo "once $side $k exit=$?"; grep -E "^pageable-user-once-(h2d|d2h)-(4KiB|64KiB|1MiB) " "$O/once-$side-$k.txt" | cut -c1-100
    done
done
timeout 130 "$T" bench -t 'pageable-user-*' -r 5 > "$O/bench-user.txt" 2>&1
echo "bench user exit=$?"; grep -E "^pageable-|targets" "$O/bench-user.txt" | grep -v ": FAIL" | cut -c1-110
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

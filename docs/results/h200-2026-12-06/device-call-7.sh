#!/usr/bin/env bash
# Device call 7 (2026-12-06): the proof of the final code. `xfer-tool calibrate` (first run of the
# machine: says it measured); gpu-check; the stress test on the pageable backend with the seed that
# found a copy refused for straddling a range the cache page-locked meanwhile, and five more; the
# user-memory bench rows. Packed into c7.tgz (or the name given second).
set -u
OUT=${1:?out}; N=${2:-c7}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
nvidia-smi --query-gpu=name,uuid,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
{ time "$T" calibrate; echo "exit $?"; } > "$O/calibrate.txt" 2>&1
head -3 "$O/calibrate.txt"
timeout 240 tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 150 > "$O/gpu-check.log" 2>&1
echo "gpu-check exit=$?"; tail -n 17 "$O/gpu-check.log"
for seed in 20261206 1 2 3 4 5; do
    timeout 60 "$B/bin/xfer_stress" --backend pageable --threads 8 --ops 300 --max-bytes 1048576 --seed $seed \
        >> "$O/stress-pageable.txt" 2>&1
    echo "stress pageable seed $seed exit=$?"
done
timeout 120 "$T" bench -t 'pageable-user-*' -r 5 > "$O/bench-user.txt" 2>&1
echo "bench exit=$?"; grep -E "^pageable-|targets" "$O/bench-user.txt"
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

#!/usr/bin/env bash
# Device call 16 (2026-12-06): the proof of the final code: gpu-check (the failures of the contract
# suite, if any, kept in contract-failures.txt); the pageable stress test with three seeds; the
# mixed workload three times, the paths alternating. Packed into c16.tgz (or the name given second).
set -u
OUT=${1:?out}; N=${2:-c16}; O=$OUT/$N; mkdir -p "$O/mix"
B=$PWD/build-gpu
R=$PWD/docs/results/h200-2026-12-06
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
nvidia-smi --query-gpu=name,uuid,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv \
    > "$O/machine.txt" 2>&1; cat "$O/machine.txt"
{ time "$T" calibrate; echo "exit $?"; } > "$O/calibrate.txt" 2>&1
head -3 "$O/calibrate.txt"
"$T" list > "$O/list.txt" 2>&1
timeout 260 tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 170 > "$O/gpu-check.log" 2>&1
echo "gpu-check exit=$?"; tail -n 17 "$O/gpu-check.log"
grep -E -B3 -A30 "Failure|FAILED" "$O/check/contract.log" > "$O/contract-failures.txt" 2>/dev/null
head -c 3000 "$O/contract-failures.txt"
grep -E -A30 "Failure" "$O/check/cuda-gpu.log" | head -c 2000
for seed in 20261206 21 22; do
    timeout 60 "$B/bin/xfer_stress" --backend pageable --threads 8 --ops 300 --max-bytes 1048576 --seed $seed \
        >> "$O/stress-pageable.txt" 2>&1
    echo "stress pageable seed $seed exit=$?"
done
for k in 1 2 3; do
    for p in auto staged driver registered; do
        XFER_PAGEABLE_PATH=$p timeout 60 "$T" run all --backend pageable --quick -f json -o "$O/mix/mix-$p-$k.json" \
            > /dev/null 2> "$O/mix/mix-$p-$k.err"
        echo "mix $p $k exit=$?"
    done
done
python3 "$R/mix_compare.py" "$O/mix" | tee "$O/mix/mix-compare.txt"
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

#!/usr/bin/env bash
# Device call 14 (2026-12-06): the proof of the final code: `xfer-tool calibrate` and `list`;
# gpu-check; the pageable stress test with two seeds; the mixed workload three times, the paths
# alternating (mix_compare.py takes the median of each workflow's runs); the snoop probe at 64 MiB.
# Packed into c14.tgz (or the name given second).
set -u
OUT=${1:?out}; N=${2:-c14}; O=$OUT/$N; mkdir -p "$O/mix"
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
"$T" list > "$O/list.txt" 2>&1
timeout 260 tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 170 > "$O/gpu-check.log" 2>&1
echo "gpu-check exit=$?"; tail -n 17 "$O/gpu-check.log"
for seed in 20261206 11; do
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
timeout 40 "$B/bin/snoop-probe" 64 > "$O/snoop-probe-64.txt" 2>&1; echo "snoop-probe exit=$?"
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

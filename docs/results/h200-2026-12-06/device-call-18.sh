#!/usr/bin/env bash
# Device call 18 (2026-12-06): the proof of the final code, with the release of a buffer waiting for
# the background registration of its view: gpu-check; the contract suite three more times on all
# five backends (call 17 saw RoundTripOfOddSizes/pageable fail once in three); the pageable stress
# test with three seeds. Packed into c18.tgz (or the name given second).
set -u
OUT=${1:?out}; N=${2:-c18}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
nvidia-smi --query-gpu=name,uuid,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv \
    > "$O/machine.txt" 2>&1; cat "$O/machine.txt"
{ time "$T" calibrate; echo "exit $?"; } > "$O/calibrate.txt" 2>&1
head -3 "$O/calibrate.txt"
"$T" list > "$O/list.txt" 2>&1
timeout 260 tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 170 > "$O/gpu-check.log" 2>&1
echo "gpu-check exit=$?"; tail -n 17 "$O/gpu-check.log"
grep -E -B3 -A30 "Failure" "$O/check/contract.log" "$O/check/cuda-gpu.log" > "$O/failures.txt" 2>/dev/null
head -c 2500 "$O/failures.txt"
for k in 1 2 3; do
    XFER_TEST_BACKENDS=host,pageable,pinned,managed,zerocopy XFER_REQUIRE_GPU=1 timeout 150 \
        "$B/bin/xfer_contract_tests" '--gtest_filter=-Contract/PeerCopy.*' > "$O/contract-$k.log" 2>&1
    echo "contract $k exit=$?"; grep -E "^\[  (PASSED|FAILED) " "$O/contract-$k.log"
    grep -E -B3 -A30 "Failure" "$O/contract-$k.log" > "$O/contract-failures-$k.txt"
    head -c 2500 "$O/contract-failures-$k.txt"
    rm -f "$O/contract-$k.log"
done
for seed in 20261206 31 32; do
    timeout 60 "$B/bin/xfer_stress" --backend pageable --threads 8 --ops 300 --max-bytes 1048576 --seed $seed \
        >> "$O/stress-pageable.txt" 2>&1
    echo "stress pageable seed $seed exit=$?"
done
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

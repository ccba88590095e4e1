#!/usr/bin/env bash
# Device call 17 (2026-12-06): the contract suite again, three times on all five backends, keeping
# the failures (call 15 on an H200 saw one failing test whose log was not kept). Packed into c17.tgz.
set -u
OUT=${1:?out}; N=${2:-c17}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
nvidia-smi --query-gpu=name,uuid --format=csv,noheader > "$O/machine.txt" 2>&1; cat "$O/machine.txt"
"$B/bin/xfer-tool" calibrate > "$O/calibrate.txt" 2>&1
for k in 1 2 3; do
    XFER_TEST_BACKENDS=host,pageable,pinned,managed,zerocopy XFER_REQUIRE_GPU=1 timeout 150 \
        "$B/bin/xfer_contract_tests" '--gtest_filter=-Contract/PeerCopy.*' > "$O/contract-$k.log" 2>&1
    echo "contract $k exit=$?"; grep -E "^\[  (PASSED|FAILED) " "$O/contract-$k.log"
    grep -E -B3 -A30 "Failure" "$O/contract-$k.log" > "$O/contract-failures-$k.txt"
    head -c 2500 "$O/contract-failures-$k.txt"
    rm -f "$O/contract-$k.log"
done
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

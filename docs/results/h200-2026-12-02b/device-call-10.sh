#!/usr/bin/env bash
# Call 10: the final code (claim order: oldest copy of each direction in turn):
# gpu-check, the full bench, the GPU fault tests, the pageable stress test, the overlap workflow.
set -u
OUT=${1:?out}; p=$OUT/proof; mkdir -p "$p"
build=$PWD/build-gpu
export LD_LIBRARY_PATH=$build/lib XFER_PLUGIN_PATH=$build/lib/xfer
tool=$build/bin/xfer-tool
step() { echo "== $(date +%T) $*"; }
step gpu-check
tools/gpu-check --build-dir "$build" --out "$p/check" --timeout 150 >"$p/gpu-check.log" 2>&1
tail -11 "$p/gpu-check.log"
(cd "$p" && tar czf check.tgz check && rm -rf check)
step bench
timeout 170 "$tool" bench --seed 1 --format json -o "$p/bench.json" >"$p/bench.txt" 2>&1
echo "bench exit=$?"; cat "$p/bench.txt"
step faults
XFER_REQUIRE_GPU=1 timeout 100 "$build/bin/xfer_cuda_fault_tests" >"$p/faults.txt" 2>&1
echo "faults exit=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$p/faults.txt"
step stress
timeout 70 "$build/bin/xfer_stress" --backend pageable --threads 8 --ops 2000 --max-bytes 4194304 --watchdog 60 >"$p/stress.txt" 2>&1
echo "stress pageable exit=$? $(tail -1 "$p/stress.txt")"
step overlap
timeout 40 "$tool" run overlap --backend pinned,pageable --repeats 10 >"$p/overlap.txt" 2>&1
grep -E "^ +(serial|pipelined|speed-up|ideal|overlap eff)|^== |backend" "$p/overlap.txt" | head -20

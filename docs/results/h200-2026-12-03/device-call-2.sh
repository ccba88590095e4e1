#!/usr/bin/env bash
# Device call 2 (2026-12-03): after the graph-capture refusals moved ahead of the registration
# cache, the packed batches and the managed prefetch, and the capture query moved to the driver
# (cuStreamIsCapturing): gpu-check again, the join tests, the per-call overhead rows, the
# Python binding's GPU tests (CuPy, PyTorch) and its framework bench. Packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
step() { echo "== $(date +%T) $*"; }
step gpu-check
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 200 > "$O/gpu-check.log" 2>&1
tail -10 "$O/gpu-check.log"
step join-tests
XFER_REQUIRE_GPU=1 timeout 90 "$B/bin/xfer_cuda_tests" --gtest_filter='*/GpuJoin.*' > "$O/join.txt" 2>&1
echo "join exit=$?"; grep -E "^\[ capture|^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure" "$O/join.txt" | head -30
step bench-overhead
timeout 60 "$tool" bench --seed 1 --targets '*-overhead-*' --format json -o "$O/bench-overhead.json" > "$O/bench-overhead.txt" 2>&1
echo "bench exit=$?"; tail -1 "$O/bench-overhead.txt"
python3 -c "
import json
for t in json.load(open('$O/bench-overhead.json'))['bench']['targets']:
    print(f\"{t['target']:24s} {t.get('verdict',''):6s} over={t['ratio']['median']:+.3f} us\")"
step python-gpu
timeout 90 bash bindings/python/tests/run_gpu.sh "$B" > "$O/python-gpu.txt" 2>&1; echo "python gpu exit=$?"
grep -E "FAIL|PASS|SKIP" "$O/python-gpu.txt" | head -40
step python-bench
XFER_LIBRARY=$B/lib/libxfer.so timeout 140 /opt/torch/.venv/bin/python bindings/python/examples/bench_frameworks.py "$O/bench-frameworks.json" --repeats 5 > "$O/bench-frameworks.txt" 2>&1
echo "python bench exit=$?"; cat "$O/bench-frameworks.txt" | tail -30
step end
cd "$OUT" && tar czf r.tgz r && rm -rf r

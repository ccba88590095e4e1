#!/usr/bin/env bash
# Device call 1 (2026-12-03): the reliability fixes and the wrapped-stream, caller-binding and
# graph-capture behaviour proven on the H200: gpu-check (the contract suite on all five
# backends, the CUDA suites), the lifetime tests on each CUDA backend, the join tests, the
# per-call overhead and pageable rows of xfer-tool bench, xfer_stress on the CUDA backends.
# Everything packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
step() { echo "== $(date +%T) $*"; }
step machine; (nvidia-smi; lscpu | head -20; id; stat -c '%a %U %n' / "$PWD" "$B" "$B/lib" "$B/lib/xfer"; uptime) > "$O/machine.txt" 2>&1
"$tool" list > "$O/list.txt" 2>&1; echo "list exit=$?"
if grep -q "owned by another user\|writable by" "$O/list.txt"; then
  echo "plugins refused as replaceable by another user here (see list.txt): XFER_PLUGIN_ALLOW_UNSAFE=1 for this call"
  export XFER_PLUGIN_ALLOW_UNSAFE=1
fi
grep -E "^ +(host|pageable|pinned|managed|zerocopy) " "$O/list.txt" | cut -c1-100
step gpu-check
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 200 > "$O/gpu-check.log" 2>&1
tail -11 "$O/gpu-check.log"
step lifetime-tests
XFER_TEST_BACKENDS=pageable,pinned,managed,zerocopy XFER_REQUIRE_GPU=1 timeout 90 "$B/bin/xfer_contract_tests" \
  --gtest_filter='*RawCopyOfAnotherContextsBufferKeepsItAlive*:*UnregisterWaitsForQueuedCopies*:*UnregisterFromAHostFunction*:*DestroyDoesNotWaitForAThreadInSynchronize*:*OverlappingRanges*:*WrappedDefaultStream*' \
  > "$O/lifetime.txt" 2>&1; echo "lifetime exit=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" "$O/lifetime.txt"
step join-tests
XFER_REQUIRE_GPU=1 timeout 90 "$B/bin/xfer_cuda_tests" --gtest_filter='*/GpuJoin.*' > "$O/join.txt" 2>&1
echo "join exit=$?"; grep -E "^\[ capture|^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]|Failure|Expected|Which is|captured|refused" "$O/join.txt" | head -40
step bench
timeout 100 "$tool" bench --seed 1 --targets '*-overhead-*,pageable-raw-*,pinned-raw-*' --format json -o "$O/bench.json" > "$O/bench.txt" 2>&1; echo "bench exit=$?"
grep -E "overhead|PASS|FAIL" "$O/bench.txt" | head -40
step stress
for b in pageable pinned managed zerocopy; do
  timeout 45 "$B/bin/xfer_stress" --backend $b --threads 8 --ops 800 --max-bytes 4194304 --watchdog 40 > "$O/stress-$b.txt" 2>&1
  echo "stress $b exit=$? $(tail -1 "$O/stress-$b.txt")"
done
step end
cd "$OUT" && tar czf r.tgz r && rm -rf r

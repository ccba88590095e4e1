#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The proof run on the H200 against a carried gpu-carry build: the contract suite on all five
# backends and the CUDA suite (tools/gpu-check), `xfer-tool bench` (table and JSON), the CuPy
# test of the Python binding, and optional extra parts named on the command line:
#   compare  (scripts/compare-time-check.sh: compare with defaults <= 90 s)
#   stress   (tests/stress on every CUDA backend, if built)
#   faults   (the GPU fault tests of issue 10, xfer_cuda_fault_tests)
# Logs are packed into OUT/proof.tgz (at most 8 files come back from a device run).
# Usage: scripts/h200-proof.sh BUILD_DIR OUT_DIR [compare] [stress] [faults]
set -u
build=$(cd "${1:?build dir}" && pwd)
out=${2:?out dir}
shift 2
mkdir -p "$out/proof"
p=$(cd "$out/proof" && pwd)
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XFER_PLUGIN_PATH="$build/lib/xfer"
tool="$build/bin/xfer-tool"
step() { echo "== $(date +%T) $*"; }

step gpu-check
tools/gpu-check --build-dir "$build" --out "$p/check" --timeout 300 >"$p/gpu-check.log" 2>&1
tail -9 "$p/gpu-check.log"
step bench
timeout 300 "$tool" bench --seed 1 --format json -o "$p/bench.json" >"$p/bench.txt" 2>&1
echo "bench exit=$?"
cat "$p/bench.txt"
step cupy
timeout 120 bash bindings/python/tests/run_cupy.sh "$build" >"$p/cupy.txt" 2>&1
echo "cupy exit=$?"; tail -12 "$p/cupy.txt"
for extra in "$@"; do
    case "$extra" in
    compare) step compare; timeout 280 bash scripts/compare-time-check.sh "$build" "$p/compare" 90 ;;
    stress)
        step stress
        if [ -x "$build/bin/xfer_stress" ]; then
            for b in pageable pinned managed zerocopy; do
                timeout 100 "$build/bin/xfer_stress" --backend "$b" --threads 8 --ops 2000 --max-bytes 4194304 \
                    --watchdog 90 >"$p/stress-$b.txt" 2>&1
                echo "stress $b exit=$? $(tail -1 "$p/stress-$b.txt")"
            done
        fi ;;
    faults)
        step faults
        XFER_REQUIRE_GPU=1 timeout 200 "$build/bin/xfer_cuda_fault_tests" >"$p/faults.txt" 2>&1
        echo "faults exit=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$p/faults.txt" ;;
    esac
done
cd "$out" && tar czf proof.tgz proof && ls -la proof.tgz

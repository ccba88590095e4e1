#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The proof run on the H200 against a carried gpu-carry build, in the order that matters most
# when device time is short: `xfer-tool bench` (table and JSON), the pageable rows of the bench
# again with staging = sync (the default is async), the CuPy test of
# the Python binding, then the contract suite on all five backends and the CUDA suite
# (tools/gpu-check, its logs packed into check.tgz). Optional parts named on the command line:
#   compare  (scripts/compare-time-check.sh: compare with defaults <= 90 s)
#   stress   (xfer_stress on every CUDA backend)
#   faults   (the GPU fault tests, xfer_cuda_fault_tests)
#   chunks   (the pageable-vs-pinned rows again with smaller staging chunks: the mid-size
#            pipeline-fill experiment of docs/performance.md)
# At most 8 files come back from a device run: everything lands in OUT/proof as few files.
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

# XFER_PROOF_EXTRAS_ONLY=1: only the optional parts named (e.g. a second run after the main one).
if [ -z "${XFER_PROOF_EXTRAS_ONLY:-}" ]; then
step bench
timeout "${XFER_PROOF_BENCH_SECONDS:-170}" "$tool" bench --seed 1 --format json -o "$p/bench.json" >"$p/bench.txt" 2>&1
echo "bench exit=$?"
cat "$p/bench.txt"
step bench sync
XFER_PAGEABLE_STAGING=sync timeout 60 "$tool" bench --seed 1 \
    --targets 'pageable-async-*,pageable-overlap,pageable-pinned-*' >"$p/bench-sync.txt" 2>&1
echo "bench sync exit=$?"
cat "$p/bench-sync.txt"
step cupy
timeout 60 bash bindings/python/tests/run_cupy.sh "$build" >"$p/cupy.txt" 2>&1
echo "cupy exit=$?"; tail -12 "$p/cupy.txt"
step gpu-check
tools/gpu-check --build-dir "$build" --out "$p/check" --timeout "${XFER_PROOF_SUITE_SECONDS:-150}" >"$p/gpu-check.log" 2>&1
tail -12 "$p/gpu-check.log"
(cd "$p" && tar czf check.tgz check && rm -rf check)
fi
for extra in "$@"; do
    case "$extra" in
    compare) step compare; timeout 280 bash scripts/compare-time-check.sh "$build" "$p/compare" 90
             (cd "$p" && tar czf compare.tgz compare && rm -rf compare) ;;
    stress)
        step stress
        for b in pageable pinned managed zerocopy; do
            timeout 100 "$build/bin/xfer_stress" --backend "$b" --threads 8 --ops 2000 --max-bytes 4194304 \
                --watchdog 90 >>"$p/stress.txt" 2>&1
            echo "stress $b exit=$? $(tail -1 "$p/stress.txt")"
        done ;;
    chunks)
        step chunks
        for c in 2MiB 1MiB 512KiB; do
            echo "== chunk_size $c" >>"$p/chunks.txt"
            XFER_PAGEABLE_CHUNK_SIZE=$c timeout 90 "$tool" bench --seed 1 --targets 'pageable-pinned-*' \
                >>"$p/chunks.txt" 2>&1
            echo "chunks $c exit=$?"
        done
        grep -E "^(==|\| pageable)" "$p/chunks.txt" ;;
    faults)
        step faults
        XFER_REQUIRE_GPU=1 timeout 200 "$build/bin/xfer_cuda_fault_tests" >"$p/faults.txt" 2>&1
        echo "faults exit=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$p/faults.txt" ;;
    esac
done

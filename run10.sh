#!/usr/bin/env bash
set -u
b=build-gpu
export LD_LIBRARY_PATH=$PWD/$b/lib XFER_PLUGIN_PATH=$PWD/$b/lib/xfer
mkdir -p $OUT/final
timeout 120 $b/bin/xfer-tool bench --seed 1 --format json -o $OUT/final/bench.json > $OUT/final/bench.txt 2>&1; echo "bench rc=$?"; tail -1 $OUT/final/bench.txt
for r in 2 3; do echo "== seed $r"; timeout 60 $b/bin/xfer-tool bench --seed $r --targets 'pageable-pinned-*,pageable-async-*,pageable-overlap,pageable-raw-*' 2>&1 | grep -E "^pageable" | grep -v ": " ; done > $OUT/final/rounds.txt 2>&1; grep -c PASS $OUT/final/rounds.txt
tools/gpu-check --build-dir $b --out $OUT/final/check --timeout 150 > $OUT/final/gpu-check.log 2>&1; sed -n '/gpu-check summary/,$p' $OUT/final/gpu-check.log
XFER_REQUIRE_GPU=1 timeout 100 $b/bin/xfer_cuda_fault_tests --gtest_filter='GpuStagedFaults.*' 2>&1 | grep -E "^\[  (PASSED|FAILED)"
XFER_PAGEABLE_STAGED_MIN_BYTES=0 XFER_PAGEABLE_STAGED_MIN_BYTES_TO_HOST=0 timeout 60 $b/bin/xfer_stress --backend pageable --threads 8 --ops 1000 --max-bytes 4194304 --watchdog 55 > $OUT/final/stress.txt 2>&1; echo "stress rc=$?"; tail -1 $OUT/final/stress.txt
cd $OUT/final && tar czf check.tgz check && rm -rf check

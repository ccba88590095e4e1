#!/usr/bin/env bash
# Device call 5: the review's changes (two lingering workers at most, odd bytes at the end,
# no query of a capturing stream): correctness, A/B against 1e84e29 (every worker lingering), full bench.
set -u
O=${1:?out}/r5; mkdir -p "$O"
B=$PWD/build-gpu; ALL=$PWD/exp/all15
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
step() { echo "== $(date +%T) $*"; }
step gpu-check; tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 150 > "$O/gpu-check.log" 2>&1; echo rc=$?; sed -n '/gpu-check summary/,$p' "$O/gpu-check.log"
step faults; XFER_REQUIRE_GPU=1 timeout 200 "$B/bin/xfer_cuda_fault_tests" > "$O/faults.txt" 2>&1; echo rc=$?; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$O/faults.txt"
step stress; timeout 100 "$B/bin/xfer_stress" --backend pageable --threads 8 --ops 2000 --max-bytes 4194304 --watchdog 90 > "$O/stress.txt" 2>&1; echo rc=$?; tail -1 "$O/stress.txt"
T='pageable-pinned-*,pageable-async-*'
for round in 1 2; do
  for v in all15 new new0; do
    step "ab $v round $round"
    case $v in
      all15) LD_LIBRARY_PATH=$ALL:$B/lib XFER_PLUGIN_PATH=$ALL XFER_PLUGIN_OVERRIDE=1 timeout 150 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
      new) timeout 150 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
      new0) XFER_PAGEABLE_STAGING_LINGER_US=0 timeout 150 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
    esac
    echo rc=$?
  done
done
step bench; timeout 170 $tool bench --seed 1 --format json -o "$O/bench.json" > "$O/bench.txt" 2>&1; echo rc=$?; cat "$O/bench.txt"
step pack; cd "$1" && tar czf r5.tgz r5 && rm -rf r5; ls -la

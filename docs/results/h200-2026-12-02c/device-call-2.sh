#!/usr/bin/env bash
# Call 2: call 1's instance was disturbed (pageable copies at 0.2-0.6x of pinned
# in every variant). Again, alternating: base / rise / demote (as in call 1), four rounds; then
# the full bench of the default (abefbc1's behaviour), the GPU fault tests and the stress tests.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
T='pageable-pinned-h2d-64MiB,pageable-pinned-h2d-256MiB,pageable-pinned-h2d-1GiB,pageable-async-h2d-64MiB'
for round in 1 2 3 4; do
  for v in base rise demote; do
    case $v in base) E="XFER_EXP_NONE=1" ;; rise) E="XFER_EXP_RISE=1" ;; demote) E="XFER_EXP_DEMOTE=1" ;; esac
    env $E timeout 90 $tool bench --seed 1 --repeats 10 --targets "$T" --format json -o $O/$v-$round.json > $O/$v-$round.txt 2>&1
    python3 -c "
import json
d=json.load(open('$O/$v-$round.json'))
print('$v $round', ' '.join(f\"{t['target'].replace('pageable-pinned-','')}={t['ratio']['median']:.3f}[{t['ratio']['max']:.2f}]\" for t in d['bench']['targets']))"
  done
done
echo "== $(date +%T) bench"
timeout 170 "$tool" bench --seed 1 --format json -o "$O/bench.json" > "$O/bench.txt" 2>&1
echo "bench exit=$?"; tail -3 "$O/bench.txt"
echo "== $(date +%T) faults"
XFER_REQUIRE_GPU=1 timeout 100 "$B/bin/xfer_cuda_fault_tests" > "$O/faults.txt" 2>&1
echo "faults exit=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$O/faults.txt"
echo "== $(date +%T) stress"
for b in pinned pageable; do
  timeout 70 "$B/bin/xfer_stress" --backend $b --threads 8 --ops 2000 --max-bytes 4194304 --watchdog 60 > "$O/stress-$b.txt" 2>&1
  echo "stress $b exit=$? $(tail -1 "$O/stress-$b.txt")"
done
cd "$OUT" && tar czf r.tgz r && rm -rf r

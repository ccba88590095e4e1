#!/usr/bin/env bash
# Call 4: the final code (9e9fee3, staging_demote = 1). The demotion against
# none (XFER_PAGEABLE_STAGING_DEMOTE=0), alternating, four rounds; gpu-check; the full bench
# twice; the GPU fault tests; xfer_stress on every CUDA backend; the overlap workflow.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
T='pageable-pinned-h2d-64MiB,pageable-pinned-h2d-256MiB,pageable-pinned-h2d-1GiB,pageable-raw-h2d-16MiB,pageable-raw-h2d-64MiB,pageable-async-h2d-64MiB'
for round in 1 2 3 4; do
  for v in demote0 demote1; do
    XFER_PAGEABLE_STAGING_DEMOTE=${v#demote} timeout 90 $tool bench --seed 1 --repeats 10 --targets "$T" --format json -o $O/$v-$round.json > $O/$v-$round.txt 2>&1
    python3 -c "
import json
d=json.load(open('$O/$v-$round.json'))
print('$v $round', ' '.join(f\"{t['target'].replace('pageable-','')}={t['ratio']['median']:.3f}[{t['ratio']['max']:.2f}]\" for t in d['bench']['targets']))"
  done
done
echo "== $(date +%T) gpu-check"
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 150 > "$O/gpu-check.log" 2>&1
tail -10 "$O/gpu-check.log"
for n in 1 2; do
  echo "== $(date +%T) bench $n"
  timeout 170 "$tool" bench --seed 1 --format json -o "$O/bench-$n.json" > "$O/bench-$n.txt" 2>&1
  echo "bench exit=$?"; tail -1 "$O/bench-$n.txt"
done
echo "== $(date +%T) faults"
XFER_REQUIRE_GPU=1 timeout 100 "$B/bin/xfer_cuda_fault_tests" > "$O/faults.txt" 2>&1
echo "faults exit=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$O/faults.txt"
echo "== $(date +%T) overlap"
timeout 40 "$tool" run overlap --backend pinned,pageable --repeats 10 > "$O/overlap.txt" 2>&1
grep -E "^ +(serial|pipelined|speed-up|overlap eff)|^== |backend" "$O/overlap.txt" | head -12
echo "== $(date +%T) stress"
for b in pageable pinned managed zerocopy; do
  timeout 100 "$B/bin/xfer_stress" --backend $b --threads 8 --ops 2000 --max-bytes 4194304 --watchdog 90 > "$O/stress-$b.txt" 2>&1
  echo "stress $b exit=$? $(tail -1 "$O/stress-$b.txt")"
done
cd "$OUT" && tar czf r.tgz r && rm -rf r

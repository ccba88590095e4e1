#!/usr/bin/env bash
# Call 1: fafdb68 and the docs after it (the review of 2026-12-02, never run on
# the H200): gpu-check, three full benches, the fill-under-DMA and memop-cost probes, an A/B of
# one stream memory operation per call (XFER_EXP_SPLIT_FLAGS, an uncommitted experiment), the GPU fault tests,
# xfer_stress on pageable and pinned, the overlap workflow. Everything packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
step() { echo "== $(date +%T) $*"; }
bench() {
  timeout 90 "$tool" bench --seed 1 --format json -o "$O/bench-$1.json" > "$O/bench-$1.txt" 2>&1
  echo "bench $1 exit=$?"; tail -1 "$O/bench-$1.txt"
}
step machine; (nvidia-smi; lscpu; cat /sys/kernel/mm/transparent_hugepage/enabled; uptime) > "$O/machine.txt" 2>&1
step gpu-check
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 150 > "$O/gpu-check.log" 2>&1
tail -10 "$O/gpu-check.log"
step bench 1; bench 1
step fill-under-dma
timeout 60 "$B/bin/fill_under_dma" > "$O/fill-under-dma.txt" 2>&1; echo "probe exit=$?"; cat "$O/fill-under-dma.txt"
step memop-cost
timeout 60 "$B/bin/memop_cost" > "$O/memop-cost.txt" 2>&1; echo "probe exit=$?"; cat "$O/memop-cost.txt"
step split-flags A/B
T='pageable-async-h2d-64MiB,pageable-async-d2h-64MiB,pageable-async-h2d-256MiB,pageable-pinned-h2d-64MiB'
for round in 1 2 3; do
  for v in 0 1; do
    XFER_EXP_SPLIT_FLAGS=$v timeout 60 "$tool" bench --seed 1 --repeats 10 --targets "$T" --format json -o "$O/split$v-$round.json" > "$O/split$v-$round.txt" 2>&1
    python3 -c "
import json
d=json.load(open('$O/split$v-$round.json'))
print('split$v $round', ' '.join(f\"{t['target'].replace('pageable-','')}={t['ratio']['median']:.3f}[{t['xfer']['median']:.4g}]\" for t in d['bench']['targets']))"
  done
done
step faults
XFER_REQUIRE_GPU=1 timeout 60 "$B/bin/xfer_cuda_fault_tests" > "$O/faults.txt" 2>&1
echo "faults exit=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$O/faults.txt"
step bench 2; bench 2
step overlap
timeout 40 "$tool" run overlap --backend pinned,pageable --repeats 10 > "$O/overlap.txt" 2>&1
grep -E "^ +(serial|pipelined|speed-up|overlap eff)|^== |backend" "$O/overlap.txt" | head -12
step stress
for b in pageable pinned; do
  timeout 95 "$B/bin/xfer_stress" --backend $b --threads 8 --ops 2000 --max-bytes 4194304 --watchdog 90 > "$O/stress-$b.txt" 2>&1
  echo "stress $b exit=$? $(tail -1 "$O/stress-$b.txt")"
done
step bench 3; bench 3
step end
cd "$OUT" && tar czf r.tgz r && rm -rf r

#!/usr/bin/env bash
# Device call 1 (2026-12-04): which path each copy took, proven on the H200. gpu-check (the
# contract suite on all five backends, the CUDA suites with the exact per-backend path counters
# and the strict-mode refusals, the CUPTI cross-check), the per-call overhead and observer rows
# of xfer-tool bench, every workflow on every backend with its path breakdown (compare, JSON),
# and a --log-copies sample. Packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
step() { echo "== $(date +%T) $*"; }
step machine; (nvidia-smi; lscpu | head -20; uptime; git log -1 --format='%H %cd' 2>/dev/null) > "$O/machine.txt" 2>&1
step gpu-check
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 240 > "$O/gpu-check.log" 2>&1
tail -12 "$O/gpu-check.log"
grep -h "^\[ cupti\|^\[ refused" "$O/check/cuda-gpu.log" | head -12
grep -h -B2 -A12 "FAILED  \]\|Failure$" "$O/check/cuda-gpu.log" | head -60
step bench-overhead
timeout 120 "$tool" bench --seed 1 --targets '*-overhead-*,*-observer-*' --format json -o "$O/bench-overhead.json" > "$O/bench-overhead.txt" 2>&1
echo "bench exit=$?"; grep -E "overhead|observer" "$O/bench-overhead.txt" | head -30; tail -2 "$O/bench-overhead.txt"
step compare
timeout 240 "$tool" compare --quick --size 64MiB --sizes 4KiB,1MiB,64MiB --format json -o "$O/compare.json" > "$O/compare.txt" 2>&1
echo "compare exit=$?"; grep -E "^== |workflow +figure|paths" "$O/compare.txt" | cut -c1-200 | head -40
step log-copies
for b in pageable pinned; do
  echo "\$ xfer-tool run sync-async --backend $b --size 64MiB --quick --log-copies" >> "$O/log-copies.txt"
  timeout 60 "$tool" run sync-async --backend $b --size 64MiB --quick --log-copies >> "$O/log-copies.txt" 2>&1
  echo "exit=$?" >> "$O/log-copies.txt"
done
grep -E "^xfer|exit=" "$O/log-copies.txt" | cut -c1-200 | head -24
step end
cd "$OUT" && tar czf r.tgz r && rm -rf r

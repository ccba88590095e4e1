#!/usr/bin/env bash
# Device call 2 (2026-12-04): after the copy counters became per thread (no locked instruction
# per copy) and the copy scope's thread-locals initial-exec: gpu-check again and the per-call
# overhead and observer rows of xfer-tool bench, twice (the spread between two runs of one
# call). Packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
step() { echo "== $(date +%T) $*"; }
step gpu-check
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 240 > "$O/gpu-check.log" 2>&1
tail -11 "$O/gpu-check.log"
grep -h "^\[ refused" "$O/check/cuda-gpu.log" | head -4
for i in 1 2; do
  step bench-overhead-$i
  timeout 120 "$tool" bench --seed 1 --targets '*-overhead-*,*-observer-*' --format json -o "$O/bench-overhead-$i.json" > "$O/bench-overhead-$i.txt" 2>&1
  echo "bench exit=$?"; tail -1 "$O/bench-overhead-$i.txt"
  python3 -c "
import json
for t in json.load(open('$O/bench-overhead-$i.json'))['bench']['targets']:
    print(f\"{t['target']:24s} {t.get('verdict',''):6s} over={t['ratio']['median']:+.3f} us raw={t['reference']['median']:.3f} us\")"
done
step end
rm -rf "$O/check/contract.log"
cd "$OUT" && tar czf r.tgz r && rm -rf r

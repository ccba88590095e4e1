#!/usr/bin/env bash
# Call 7: the final code (838ffcc: head, remainder and tail demoted): gpu-check
# and the full bench. (Call 6 ran two full benches on call 5's warm machine with 9e9fee3's build
# and the experiment switch that became 838ffcc's rule.)
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
echo "== $(date +%T) gpu-check"
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 120 > "$O/gpu-check.log" 2>&1
tail -10 "$O/gpu-check.log"
echo "== $(date +%T) bench"
timeout 90 "$B/bin/xfer-tool" bench --seed 1 --format json -o "$O/bench.json" > "$O/bench.txt" 2>&1
echo "bench exit=$?"; cat "$O/bench.txt"
cd "$OUT" && tar czf r.tgz r && rm -rf r

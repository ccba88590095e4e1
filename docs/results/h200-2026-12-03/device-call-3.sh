#!/usr/bin/env bash
# Device call 3 (2026-12-03): whole Fortran arrays through the pageable and pinned backends
# (xfer_fortran_bench), and the per-call overhead rows twice more for their spread.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
step() { echo "== $(date +%T) $*"; }
step fortran-bench
timeout 120 "$B/bin/xfer_fortran_bench" 7 > "$O/fortran-bench.txt" 2>&1; echo "fortran bench exit=$?"; cat "$O/fortran-bench.txt"
for round in 1 2; do
  step "bench-overhead $round"
  timeout 50 "$B/bin/xfer-tool" bench --seed $round --targets '*-overhead-*' --format json -o "$O/bench-overhead-$round.json" > /dev/null 2>&1
  python3 -c "
import json
for t in json.load(open('$O/bench-overhead-$round.json'))['bench']['targets']:
    print(f\"{t['target']:24s} {t.get('verdict',''):6s} over={t['ratio']['median']:+.3f} us\")"
done
step end
cd "$OUT" && tar czf r.tgz r && rm -rf r

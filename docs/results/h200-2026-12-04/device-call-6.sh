#!/usr/bin/env bash
# Device call 6 (2026-12-04): the bench rows for copies after an idle gap (30 ms) on the pageable
# and pinned backends, against the same copy back to back, twice. Packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
for i in 1 2; do
  timeout 200 "$B/bin/xfer-tool" bench --seed 1 --targets '*-gap-*' --format json -o "$O/bench-gap-$i.json" > "$O/bench-gap-$i.txt" 2>&1
  echo "bench exit=$?"; tail -12 "$O/bench-gap-$i.txt"
done
cd "$OUT" && tar czf r.tgz r && rm -rf r

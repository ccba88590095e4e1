#!/usr/bin/env bash
# Call 1: the staging pipeline's start and its freshly written chunks, four
# variants alternating in one process sequence (environment switches of one build):
#   base   - abefbc1's layout (head chunk/8, whole chunks, halving tail), memcpy fill
#   rise   - copies to the device rise after the head: chunk/4, chunk/2, then whole chunks
#   demote - each filled piece is pushed out of the writing core's caches (cldemote)
#   both   - rise and demote
# then gpu-check on the same build with every switch off (abefbc1's behaviour).
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
T='pageable-pinned-h2d-64MiB,pageable-pinned-h2d-256MiB,pageable-pinned-h2d-1GiB,pageable-pinned-d2h-64MiB,pageable-async-h2d-64MiB'
for round in 1 2 3; do
  for v in base rise demote both; do
    case $v in base) E="XFER_EXP_NONE=1" ;; rise) E="XFER_EXP_RISE=1" ;; demote) E="XFER_EXP_DEMOTE=1" ;; both) E="XFER_EXP_RISE=1 XFER_EXP_DEMOTE=1" ;; esac
    env $E timeout 90 $tool bench --seed 1 --repeats 10 --targets "$T" --format json -o $O/$v-$round.json > $O/$v-$round.txt 2>&1
    python3 -c "
import json
d=json.load(open('$O/$v-$round.json'))
print('$v $round', ' '.join(f\"{t['target'].replace('pageable-','')}={t['ratio']['median']:.3f}\" for t in d['bench']['targets']))"
  done
done
echo "== $(date +%T) gpu-check"
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 150 > "$O/gpu-check.log" 2>&1
tail -11 "$O/gpu-check.log"
cd "$OUT" && tar czf r.tgz r && rm -rf r

#!/usr/bin/env bash
# Call 5: the staging workers' fill with non-temporal stores (XFER_EXP_NT=1: every
# chunk; 2: the head, remainder and tail; an uncommitted experiment using cuda_common's
# dma_staging_copy) against the code's memcpy + cldemote of the edges, alternating, three rounds;
# the dma-after-fill probe first (this instance's host).
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
timeout 60 "$B/bin/dma_after_fill" > "$O/dma-after-fill.txt" 2>&1; echo "probe exit=$?"; cat "$O/dma-after-fill.txt"
T='pageable-pinned-h2d-64MiB,pageable-pinned-h2d-256MiB,pageable-pinned-h2d-1GiB,pageable-overlap'
for round in 1 2 3; do
  for v in demote-edges:0 nt-all:1 nt-edges:2; do
    name=${v%%:*}; nt=${v#*:}
    XFER_EXP_NT=$nt timeout 60 "$tool" bench --seed 1 --repeats 10 --targets "$T" --format json -o "$O/ab-$name-$round.json" > "$O/ab-$name-$round.txt" 2>&1
    python3 -c "
import json
d=json.load(open('$O/ab-$name-$round.json'))
print('$name $round', ' '.join(f\"{t['target'].replace('pageable-','')}={t['ratio']['median']:.3f}\" for t in d['bench']['targets']))"
  done
done
cd "$OUT" && tar czf r.tgz r && rm -rf r

#!/usr/bin/env bash
# Call 3: cldemote after each filled piece helped 64 MiB to the device in call 2
# (+0.02-0.05) and cost 256 MiB / 1 GiB 0.10-0.15. Two narrower forms, alternating with the base:
#   small - every piece of copies to the device of at most 64 MiB
#   edges - only the head, the remainder and the tail chunks (the ones whose DMA follows their fill)
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
T='pageable-pinned-h2d-64MiB,pageable-pinned-h2d-256MiB,pageable-pinned-h2d-1GiB,pageable-raw-h2d-16MiB'
for round in 1 2 3 4; do
  for v in base small edges; do
    case $v in base) E="XFER_EXP_NONE=1" ;; small) E="XFER_EXP_DEMOTE_MAX=67108864" ;; edges) E="XFER_EXP_DEMOTE_EDGES=1" ;; esac
    env $E timeout 90 $tool bench --seed 1 --repeats 10 --targets "$T" --format json -o $O/$v-$round.json > $O/$v-$round.txt 2>&1
    python3 -c "
import json
d=json.load(open('$O/$v-$round.json'))
print('$v $round', ' '.join(f\"{t['target'].replace('pageable-pinned-','')}={t['ratio']['median']:.3f}[{t['ratio']['max']:.2f}]\" for t in d['bench']['targets']))"
  done
done
cd "$OUT" && tar czf r.tgz r && rm -rf r

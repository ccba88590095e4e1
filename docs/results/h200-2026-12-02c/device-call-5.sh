#!/usr/bin/env bash
# Call 5: call 4's full benches read pageable-overlap 0.75 with the demotion on
# (0.93 in call 2 without it). Alternating, three rounds: staging_demote 0; 1 (chunks smaller
# than chunk_size); edges (an experiment switch: chunks smaller than the copy's own chunk, i.e.
# only the head and the tail; the overlap workflow's 32 MiB copies have 4 MiB chunks).
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
T='pageable-overlap,pageable-raw-h2d-16MiB,pageable-pinned-h2d-64MiB,pageable-pinned-h2d-256MiB,pageable-async-h2d-64MiB'
for round in 1 2 3; do
  for v in d0 d1 edges; do
    case $v in d0) E="XFER_PAGEABLE_STAGING_DEMOTE=0" ;; d1) E="XFER_PAGEABLE_STAGING_DEMOTE=1" ;; edges) E="XFER_EXP_EDGES=1" ;; esac
    env $E timeout 90 $tool bench --seed 1 --repeats 10 --targets "$T" --format json -o $O/$v-$round.json > $O/$v-$round.txt 2>&1
    python3 -c "
import json
d=json.load(open('$O/$v-$round.json'))
print('$v $round', ' '.join(f\"{t['target'].replace('pageable-','')}={t['ratio']['median']:.3f}[{t['ratio']['max']:.2f}]\" for t in d['bench']['targets']))"
  done
done
cd "$OUT" && tar czf r.tgz r && rm -rf r

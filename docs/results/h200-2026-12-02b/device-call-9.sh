#!/usr/bin/env bash
# Call 9: the workers' claim order: round robin (today), oldest first, oldest of each direction in turn.
set -u
O=${1:?out}/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
for round in 1 2 3; do
  for v in rr fifo dir; do
    case $v in rr) E="XFER_EXP_NONE=1" ;; fifo) E="XFER_EXP_FIFO=1" ;; dir) E="XFER_EXP_DIR=1" ;; esac
    env $E timeout 90 $tool bench --seed 1 --repeats 10 --targets 'pageable-overlap,pageable-pinned-h2d-256MiB,pageable-pinned-d2h-256MiB' --format json -o $O/claim-$v-$round.json > $O/claim-$v-$round.txt 2>&1
    python3 -c "
import json
d=json.load(open('$O/claim-$v-$round.json'))
print('$v $round', ' '.join(f\"{t['target'].replace('pageable-pinned-','')}={t['xfer']['median']:.3f}/{t['reference']['median']:.3f} r={t['ratio']['median']:.3f}\" for t in d['bench']['targets']))"
  done
done
for v in rr dir; do
  case $v in rr) E="XFER_EXP_NONE=1" ;; dir) E="XFER_EXP_DIR=1" ;; esac
  env $E timeout 60 $tool run overlap --backend pageable --repeats 10 --trace $O/overlap-$v.trace.json > $O/overlap-$v.txt 2>&1
  echo "== $v"; grep -E "^ +(serial|pipelined|speed-up|ideal|overlap eff)" $O/overlap-$v.txt
done
cd "$1" && tar czf r.tgz r && rm -rf r

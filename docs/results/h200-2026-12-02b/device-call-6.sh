#!/usr/bin/env bash
# Call 6: pageable-overlap under arena sizes, chunk sizes and lingering, two rounds.
set -u
O=${1:?out}/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
for round in 1 2; do
  for v in default s30 s60 c4s30 c4s60 l15 s60l15; do
    case $v in
      default) E="" ;;
      s30) E="XFER_PAGEABLE_STAGING_SLOTS=30" ;;
      s60) E="XFER_PAGEABLE_STAGING_SLOTS=60" ;;
      c4s30) E="XFER_PAGEABLE_CHUNK_SIZE=4194304 XFER_PAGEABLE_STAGING_SLOTS=30" ;;
      c4s60) E="XFER_PAGEABLE_CHUNK_SIZE=4194304 XFER_PAGEABLE_STAGING_SLOTS=60" ;;
      l15) E="XFER_PAGEABLE_STAGING_LINGER_WORKERS=15" ;;
      s60l15) E="XFER_PAGEABLE_STAGING_SLOTS=60 XFER_PAGEABLE_STAGING_LINGER_WORKERS=15" ;;
    esac
    env $E timeout 60 $tool bench --seed 1 --repeats 10 --targets 'pageable-overlap,pageable-pinned-h2d-64MiB' --format json -o $O/ov-$v-$round.json > $O/ov-$v-$round.txt 2>&1
    python3 -c "
import json
d=json.load(open('$O/ov-$v-$round.json'))
print('$v $round', ' '.join(f\"{t['target']}={t['xfer']['median']:.3f}/{t['reference']['median']:.3f} r={t['ratio']['median']:.3f}\" for t in d['bench']['targets']))"
  done
done
timeout 60 $tool run overlap --backend pageable --repeats 5 > $O/overlap-default.txt 2>&1
XFER_PAGEABLE_STAGING_SLOTS=60 timeout 60 $tool run overlap --backend pageable --repeats 5 > $O/overlap-s60.txt 2>&1
grep -iE "serial|pipelined|speed-up|efficiency" $O/overlap-default.txt $O/overlap-s60.txt | head -20
cd "$1" && tar czf r.tgz r && rm -rf r

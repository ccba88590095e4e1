#!/usr/bin/env bash
# Call 2: copies of kind cudaMemcpyDefault (managed memory, zero-copy views)
# through the runtime's cudaMemcpyAsync (XFER_EXP_RUNTIME_DEFAULT=1, an uncommitted experiment in
# engine_copy) against the driver's cuMemcpyAsync (0, the code), alternating, three rounds of the
# eight overhead rows (pinned and pageable copies use explicit kinds: controls).
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
for round in 1 2 3; do
  for v in 0 1; do
    XFER_EXP_RUNTIME_DEFAULT=$v timeout 60 "$tool" bench --seed 1 --repeats 20 --targets '*-overhead-*' --format json -o "$O/rt$v-$round.json" > "$O/rt$v-$round.txt" 2>&1
    python3 -c "
import json
d=json.load(open('$O/rt$v-$round.json'))
print('runtime$v $round', ' '.join(f\"{t['target'].replace('-overhead','')}={t['ratio']['median']:+.3f}\" for t in d['bench']['targets']))"
  done
done
cd "$OUT" && tar czf r.tgz r && rm -rf r

#!/usr/bin/env bash
# Call 6, on call 5's machine while still warm: 9e9fee3's build with the
# experiment switch XFER_EXP_EDGES=1 (demote only chunks smaller than the copy's own chunk: the
# rule 838ffcc made the code's): the full bench twice and the overlap workflow.
set -u
OUT=${1:?out}; mkdir -p "$OUT/r"
export LD_LIBRARY_PATH=$PWD/build-gpu/lib XFER_PLUGIN_PATH=$PWD/build-gpu/lib/xfer XFER_EXP_EDGES=1
for n in 1 2; do
  timeout 100 build-gpu/bin/xfer-tool bench --seed 1 --format json -o $OUT/r/bench-edges-$n.json > $OUT/r/bench-edges-$n.txt 2>&1
  echo "bench $n exit=$?"; tail -1 $OUT/r/bench-edges-$n.txt
done
timeout 40 build-gpu/bin/xfer-tool run overlap --backend pinned,pageable --repeats 10 > $OUT/r/overlap-edges.txt 2>&1
grep -E "^ +(speed-up|overlap eff)|^== " $OUT/r/overlap-edges.txt
cd $OUT && tar czf r.tgz r && rm -rf r

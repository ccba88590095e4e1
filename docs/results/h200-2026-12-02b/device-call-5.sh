#!/usr/bin/env bash
# Call 5: the proof run on 811b660, then the overhead rows twice more and the probe.
set -u
OUT=${1:?out}
B=$PWD/build-gpu
bash scripts/h200-proof.sh build-gpu "$OUT" faults stress
X=$OUT/x; mkdir -p $X
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
for r in 1 2; do
  echo "== $(date +%T) overhead rows $r"; timeout 60 $B/bin/xfer-tool bench --seed 1 --repeats 20 --targets '*-overhead-*' --format json -o $X/overhead-$r.json > $X/overhead-$r.txt 2>&1; echo rc=$?
done
timeout 60 exp/probe_overhead > $X/probe.txt 2>&1; cat $X/probe.txt
cd $OUT && tar czf extras.tgz x && rm -rf x; ls -la $OUT $OUT/proof

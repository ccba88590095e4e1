#!/usr/bin/env bash
# Device call 6: the final code (two lingering workers at most, woken outside the mutex):
# gpu-check, A/B against 1e84e29 (every worker lingering) and linger 0, the full bench.
set -u
O=${1:?out}/r6; mkdir -p "$O"
B=$PWD/build-gpu; ALL=$PWD/exp/all15
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
step() { echo "== $(date +%T) $*"; }
step gpu-check; tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 150 > "$O/gpu-check.log" 2>&1; echo rc=$?; sed -n '/gpu-check summary/,$p' "$O/gpu-check.log"
T='pageable-pinned-h2d-64MiB,pageable-pinned-d2h-64MiB,pageable-pinned-h2d-256MiB,pageable-async-*'
for round in 1 2 3; do
  for v in all15 new new0; do
    case $v in
      all15) LD_LIBRARY_PATH=$ALL:$B/lib XFER_PLUGIN_PATH=$ALL XFER_PLUGIN_OVERRIDE=1 timeout 100 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
      new) timeout 100 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
      new0) XFER_PAGEABLE_STAGING_LINGER_US=0 timeout 100 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
    esac
    echo "ab $v $round rc=$?"
  done
done
step bench; timeout 170 $tool bench --seed 1 --format json -o "$O/bench.json" > "$O/bench.txt" 2>&1; echo rc=$?; cat "$O/bench.txt"
step pack; cd "$1" && tar czf r6.tgz r6 && rm -rf r6

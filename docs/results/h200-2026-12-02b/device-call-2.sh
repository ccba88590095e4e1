#!/usr/bin/env bash
# Call 1: callgrind instruction counts per call; timing probe.
set -u
O=${1:?out}/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer VALGRIND_LIB=$PWD/exp/vg
step() { echo "== $(date +%T) $*"; }
step callgrind
for b in pinned pageable zerocopy managed; do
  ( timeout 300 exp/vg/valgrind.bin --tool=callgrind --instr-atstart=no --collect-atstart=no --callgrind-out-file=$O/cg-$b.out exp/cg_probe $b > $O/cg-$b.log 2>&1; echo "$b rc=$?" ) &
done
wait
ls $O | head -50
tail -3 $O/cg-pinned.log
step done
step pack; cd "$1" && tar czf r.tgz r && rm -rf r; ls -la

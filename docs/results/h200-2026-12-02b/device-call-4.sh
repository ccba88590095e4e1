#!/usr/bin/env bash
# Call 3: callgrind of the new code; old/new A/B of the per-call overhead.
set -u
O=${1:?out}/r; mkdir -p "$O"
B=$PWD/build-gpu; OLD=$PWD/exp/old
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer VALGRIND_LIB=$PWD/exp/vg
tool=$B/bin/xfer-tool
step() { echo "== $(date +%T) $*"; }
old() { LD_LIBRARY_PATH=$OLD:$B/lib XFER_PLUGIN_PATH=$OLD XFER_PLUGIN_OVERRIDE=1 "$@"; }
step callgrind
for b in pinned pageable zerocopy managed; do
  ( timeout 200 exp/vg/valgrind.bin --tool=callgrind --instr-atstart=no --collect-atstart=no --callgrind-out-file=$O/cg-$b.out exp/cg_probe $b > $O/cg-$b.log 2>&1; echo "$b rc=$?" ) &
done
wait
for round in 1 2 3; do
  step "probe old $round"; old timeout 100 exp/probe_overhead > "$O/probe-old-$round.txt" 2>&1; echo rc=$?; grep -E "^(pinned|pageable|zerocopy)" "$O/probe-old-$round.txt" | cut -c1-200
  step "probe new $round"; timeout 100 exp/probe_overhead > "$O/probe-new-$round.txt" 2>&1; echo rc=$?; grep -E "^(pinned|pageable|zerocopy)" "$O/probe-new-$round.txt" | cut -c1-200
done
T='*-overhead-*'
for round in 1 2 3; do
  step "bench old $round"; old timeout 120 $tool bench --seed 1 --repeats 20 --targets "$T" --format json -o "$O/ab-old-$round.json" > "$O/ab-old-$round.txt" 2>&1; echo rc=$?; grep -E "overhead" "$O/ab-old-$round.txt"
  step "bench new $round"; timeout 120 $tool bench --seed 1 --repeats 20 --targets "$T" --format json -o "$O/ab-new-$round.json" > "$O/ab-new-$round.txt" 2>&1; echo rc=$?; grep -E "overhead" "$O/ab-new-$round.txt"
done
step pack; cd "$1" && tar czf r.tgz r && rm -rf r; ls -la

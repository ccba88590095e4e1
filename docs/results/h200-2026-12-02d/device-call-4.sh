#!/usr/bin/env bash
# Call 4: the final code's full bench on another instance, with the fill-under-DMA
# probe before and after it (how fast this instance's host fills), the dma-after-fill probe (the
# link reading just-filled memory by where the fill left its lines), an A/B of what the workers do
# with the lines they filled (XFER_EXP_LINE_OP: 0 cldemote, 1 clwb, 2 clflushopt; XFER_EXP_LINE_ALL=1:
# every chunk, else the head, remainder and tail; an uncommitted experiment), and the staged rows again.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
{ lscpu | grep -E "Model name|^CPU\(s\)|L3|NUMA node\(s\)"; echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled)"; uptime; } > "$O/machine.txt" 2>&1
timeout 60 "$B/bin/fill_under_dma" > "$O/fill-before.txt" 2>&1; echo "probe exit=$?"; cat "$O/fill-before.txt"
timeout 60 "$B/bin/dma_after_fill" > "$O/dma-after-fill.txt" 2>&1; echo "probe exit=$?"; cat "$O/dma-after-fill.txt"
T='pageable-pinned-h2d-64MiB,pageable-pinned-h2d-256MiB,pageable-pinned-h2d-1GiB,pageable-overlap'
for round in 1 2 3; do
  for v in demote-edges:0:0 clwb-edges:1:0 flush-edges:2:0 clwb-all:1:1 flush-all:2:1; do
    name=${v%%:*}; rest=${v#*:}; op=${rest%%:*}; all=${rest#*:}
    XFER_EXP_LINE_OP=$op XFER_EXP_LINE_ALL=$all timeout 60 "$tool" bench --seed 1 --repeats 10 --targets "$T" --format json -o "$O/ab-$name-$round.json" > "$O/ab-$name-$round.txt" 2>&1
    python3 -c "
import json
d=json.load(open('$O/ab-$name-$round.json'))
print('$name $round', ' '.join(f\"{t['target'].replace('pageable-','')}={t['ratio']['median']:.3f}\" for t in d['bench']['targets']))"
  done
done
timeout 90 "$tool" bench --seed 1 --format json -o "$O/bench.json" > "$O/bench.txt" 2>&1
echo "bench exit=$?"; tail -1 "$O/bench.txt"
for n in 1 2; do
  timeout 60 "$tool" bench --seed 1 --targets 'pageable-pinned-*,pageable-overlap' --format json -o "$O/rows-$n.json" > "$O/rows-$n.txt" 2>&1
  python3 -c "
import json
d=json.load(open('$O/rows-$n.json'))
print('rows $n', ' '.join(f\"{t['target'].replace('pageable-','')}={t['ratio']['median']:.3f}\" for t in d['bench']['targets']))"
done
timeout 60 "$B/bin/fill_under_dma" > "$O/fill-after.txt" 2>&1; echo "probe exit=$?"; cat "$O/fill-after.txt"
cd "$OUT" && tar czf r.tgz r && rm -rf r

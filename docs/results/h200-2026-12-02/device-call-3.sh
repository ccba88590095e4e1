#!/usr/bin/env bash
# Device call 3: overhead probe (with the core's share), traces of the final layout, A/B with more repeats.
set -u
O=${1:?out}/r3; mkdir -p "$O"
B=$PWD/build-gpu; OLD=$PWD/exp/old
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
py=/opt/torch/.venv/bin/python
step() { echo "== $(date +%T) $*"; }
step probe; timeout 120 exp/probe_overhead > "$O/probe-overhead.txt" 2>&1; echo rc=$?; cat "$O/probe-overhead.txt"
step trace new; mkdir -p "$O/trace-new"; XFER_LIBRARY=$B/lib/libxfer.so timeout 120 $py docs/results/h200-2026-12-01e/trace_probe.py "$B" "$O/trace-new" > "$O/trace-new.log" 2>&1; echo rc=$?
grep -A14 "pageable-h2d-64MiB#[23]\|pageable-d2h-64MiB#[23]" "$O/trace-new/trace-summary.txt" | cut -c1-110
for round in 1 2 3; do
  for v in old new; do
    step "ab $v round $round"
    if [ $v = old ]; then
      LD_LIBRARY_PATH=$OLD:$B/lib XFER_PLUGIN_PATH=$OLD XFER_PLUGIN_OVERRIDE=1 timeout 150 $tool bench --seed 1 --repeats 20 --targets 'pageable-pinned-*,pageable-overlap' --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1
    else
      timeout 150 $tool bench --seed 1 --repeats 20 --targets 'pageable-pinned-*,pageable-overlap' --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1
    fi
    echo rc=$?
  done
done
step pack; cd "$1" && tar czf r3.tgz r3 && rm -rf r3; ls -la

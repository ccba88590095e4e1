#!/usr/bin/env bash
# Device call 2: CPU flags, overlap traces (old / new / new + non-temporal edges), A/B bench.
set -u
O=${1:?out}/r2; mkdir -p "$O"
B=$PWD/build-gpu; OLD=$PWD/exp/old
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
py=/opt/torch/.venv/bin/python
step() { echo "== $(date +%T) $*"; }
step flags; (grep -o -w 'cldemote\|clwb\|clflushopt\|movdir64b\|avx512f\|serialize' /proc/cpuinfo | sort | uniq -c; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag) > "$O/flags.txt" 2>&1; cat "$O/flags.txt"
for v in new newnt old; do
  step "trace $v"; mkdir -p "$O/t-$v"
  case $v in
    new) XFER_LIBRARY=$B/lib/libxfer.so timeout 150 $py exp/trace_overlap.py "$O/t-$v" > "$O/t-$v.log" 2>&1 ;;
    newnt) XFER_EXP_NT_EDGES=1 XFER_LIBRARY=$B/lib/libxfer.so timeout 150 $py exp/trace_overlap.py "$O/t-$v" > "$O/t-$v.log" 2>&1 ;;
    old) XFER_LIBRARY=$OLD/libxfer.so.1 LD_LIBRARY_PATH=$OLD:$B/lib XFER_PLUGIN_PATH=$OLD XFER_PLUGIN_OVERRIDE=1 timeout 150 $py exp/trace_overlap.py "$O/t-$v" > "$O/t-$v.log" 2>&1 ;;
  esac
  echo rc=$?; cat "$O/t-$v.log" | tail -40
done
T='pageable-pinned-*,pageable-async-*,pageable-overlap'
for round in 1 2; do
  for v in old new newnt; do
    step "ab $v round $round"
    case $v in
      old) LD_LIBRARY_PATH=$OLD:$B/lib XFER_PLUGIN_PATH=$OLD XFER_PLUGIN_OVERRIDE=1 timeout 150 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
      new) timeout 150 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
      newnt) XFER_EXP_NT_EDGES=1 timeout 150 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
    esac
    echo rc=$?; grep -E "^\| pageable-(pinned|overlap)" "$O/ab-$v-$round.txt"
  done
done
step pack; cd "$1" && tar czf r2.tgz r2 && rm -rf r2; ls -la

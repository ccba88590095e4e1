#!/usr/bin/env bash
# Device call 1: overhead probe, A/B of the staging changes, traces, the
# bidirectional ceiling, gpu-check. Usage: bash exp/run1.sh OUT
set -u
O=${1:?out}/r; mkdir -p "$O"
B=$PWD/build-gpu; OLD=$PWD/exp/old
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tool=$B/bin/xfer-tool
py=/opt/torch/.venv/bin/python
step() { echo "== $(date +%T) $*"; }
step machine; (nproc; lscpu | grep -E "Model name|L3|NUMA node\(s\)"; nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv) > "$O/machine.txt" 2>&1; cat "$O/machine.txt"
step probe overhead; timeout 120 exp/probe_overhead > "$O/probe-overhead.txt" 2>&1; echo rc=$?; cat "$O/probe-overhead.txt"
T='pageable-pinned-*,pageable-async-*,pageable-overlap'
for round in 1 2; do
  for v in old new0 new; do
    step "ab $v round $round"
    case $v in
      old) LD_LIBRARY_PATH=$OLD:$B/lib XFER_PLUGIN_PATH=$OLD XFER_PLUGIN_OVERRIDE=1 timeout 150 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
      new0) XFER_PAGEABLE_STAGING_LINGER_US=0 timeout 150 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
      new) timeout 150 $tool bench --seed 1 --targets "$T" --format json -o "$O/ab-$v-$round.json" > "$O/ab-$v-$round.txt" 2>&1 ;;
    esac
    echo rc=$?; grep -E "^\| pageable" "$O/ab-$v-$round.txt"
  done
done
step trace new; mkdir -p "$O/trace-new"; XFER_LIBRARY=$B/lib/libxfer.so timeout 120 $py docs/results/h200-2026-12-01e/trace_probe.py "$B" "$O/trace-new" > "$O/trace-new.log" 2>&1; echo rc=$?; grep -A14 "pageable-h2d-64MiB#1\|pageable-d2h-64MiB#1" "$O/trace-new/trace-summary.txt" | head -40
step trace old; mkdir -p "$O/trace-old"; XFER_LIBRARY=$OLD/libxfer.so.1 LD_LIBRARY_PATH=$OLD:$B/lib XFER_PLUGIN_PATH=$OLD XFER_PLUGIN_OVERRIDE=1 timeout 120 $py docs/results/h200-2026-12-01e/trace_probe.py "$B" "$O/trace-old" > "$O/trace-old.log" 2>&1; echo rc=$?
step bidir; XFER_LIBRARY=$B/lib/libxfer.so timeout 120 $py exp/bidir.py > "$O/bidir.txt" 2>&1; echo rc=$?; cat "$O/bidir.txt"
step overlap run; timeout 120 $tool run overlap --backend pinned,pageable --repeats 10 > "$O/overlap-run.txt" 2>&1; echo rc=$?; tail -40 "$O/overlap-run.txt"
step gpu-check; tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 150 > "$O/gpu-check.log" 2>&1; echo rc=$?; tail -12 "$O/gpu-check.log"
step faults; XFER_REQUIRE_GPU=1 timeout 200 "$B/bin/xfer_cuda_fault_tests" > "$O/faults.txt" 2>&1; echo rc=$?; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$O/faults.txt"
step pack; cd "$1" && tar czf r.tgz r && rm -rf r; ls -la

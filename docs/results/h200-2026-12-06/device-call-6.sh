#!/usr/bin/env bash
# Device call 6 (2026-12-06): the proof of the final code, copies to the host from a cached
# registration proven piece by piece. gpu-check (contract suite on five backends, the CUDA unit,
# no-device and GPU tests, CUPTI, faults, stress, sharing between two processes, the NCCL
# example, roundtrips); the bench rows of user memory and of copies between other work;
# reuse-probe.c at 64 MiB and 1 GiB both ways. Packed into c6.tgz (or the name given second).
set -u
OUT=${1:?out}; N=${2:-c6}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
nvidia-smi --query-gpu=name,uuid,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
{ echo "== calibrate"; "$T" calibrate; echo "exit $?"; } > "$O/calibrate.txt" 2>&1
timeout 240 tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 150 > "$O/gpu-check.log" 2>&1
echo "gpu-check exit=$?"; tail -n 17 "$O/gpu-check.log"
grep -h -E "RemappedRange|StraddlingACached" "$O/check/cuda-gpu.log" | grep -E "OK|FAILED" | head -6
timeout 120 "$T" bench -t 'pageable-user-*,*-gap-*,*-work-gap-*' -r 5 > "$O/bench-user.txt" 2>&1
echo "bench exit=$?"; grep -E "^(pageable|pinned)-|targets" "$O/bench-user.txt"
for a in "64 h2d" "1024 h2d" "64 d2h" "1024 d2h"; do
    timeout 60 "$B/bin/reuse-probe" $a > "$O/reuse-probe-${a/ /-}.txt" 2>&1; echo "probe $a exit=$?"
    grep -E "rep 1" "$O/reuse-probe-${a/ /-}.txt" | cut -c1-60
done
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

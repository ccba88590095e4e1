#!/usr/bin/env bash
# Device call 3 (2026-12-06), first command: the proof of the final code. The calibration (a
# first measurement timed, the kept one read back) and `xfer-tool list` with each context's
# derived values; gpu-check (the contract suite on five backends, the CUDA unit, no-device and
# GPU tests with the user-memory tests, CUPTI, faults, stress, sharing between two processes,
# the NCCL example, roundtrips); the bench rows of user memory and of copies between other work.
# Packed into c3a.tgz (or the name given second).
set -u
OUT=${1:?out}; N=${2:-c3a}; O=$OUT/$N; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
nvidia-smi --query-gpu=name,uuid,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv > "$O/machine.txt" 2>&1
{
    echo "== first calibration"; time "$T" calibrate; echo "exit $?"
    echo "== again (kept)"; time "$T" calibrate; echo "exit $?"
    echo "== list"; "$T" list
} > "$O/calibrate.txt" 2>&1
"$T" calibrate -f json > "$O/calibration.json" 2>&1
sed -n 1,45p "$O/calibrate.txt"
timeout 270 tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 150 > "$O/gpu-check.log" 2>&1
echo "gpu-check exit=$?"; tail -n 24 "$O/gpu-check.log"
grep -h -E "GpuUserMemory|calibration took" "$O/check/cuda-gpu.log" | grep -E "OK|FAILED|took" | head -12
timeout 110 "$T" bench -t 'pageable-user-*,*-gap-*,*-work-gap-*' -r 5 > "$O/bench-user.txt" 2>&1
echo "bench exit=$?"; tail -n 42 "$O/bench-user.txt"
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf "$N.tgz" "$N" && rm -rf "$N"

#!/usr/bin/env bash
# Device call 2 (2026-12-06): the per-copy choice for user memory on the GPU. The calibration
# (first measurement, a kept one read back, a forced one), `xfer-tool list` with each context's
# derived values, gpu-check (contract suite on five backends, CUDA unit/no-device/GPU tests with
# the user-memory tests, CUPTI, faults, stress, sharing, NCCL, roundtrips), `mpirun -np 2
# xfer-tool run bandwidth`, and the bench rows of user memory and of copies between other work.
# Packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
T=$B/bin/xfer-tool
{
    echo "== first calibration"; time "$T" calibrate; echo "exit $?"
    echo "== again (kept)"; time "$T" calibrate; echo "exit $?"
    echo "== forced"; "$T" calibrate --force --format json > "$O/calibration.json"; echo "exit $?"
    echo "== list"; "$T" list
} > "$O/calibrate.txt" 2>&1
head -60 "$O/calibrate.txt"
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 300 > "$O/gpu-check.log" 2>&1
tail -22 "$O/gpu-check.log"
grep -h -E "GpuUserMemory|calibration took" "$O/check/cuda-gpu.log" | grep -E "OK|FAILED|took" | head -12
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
timeout 120 mpirun -np 2 --oversubscribe -x LD_LIBRARY_PATH -x XFER_PLUGIN_PATH "$T" run bandwidth --backend pinned \
    --quick -f json -o "$O/mpi-survey.json" > "$O/mpi-survey.txt" 2>&1
echo "mpirun exit=$?"; tail -12 "$O/mpi-survey.txt"
# The mixed workload: every workflow on the pageable backend's buffers (page-aligned malloc'd
# host views: user memory) with the default choice and with each fixed one of before.
for p in auto staged driver registered; do
    XFER_PAGEABLE_PATH=$p timeout 150 "$T" run all --backend pageable --quick -f json -o "$O/mix-$p.json" \
        > "$O/mix-$p.txt" 2>&1
    echo "mix $p exit=$?"
done
timeout 420 "$T" bench -t 'pageable-user-*,*-gap-*,*-work-gap-*' -r 8 > "$O/bench-user.txt" 2>&1
echo "bench exit=$?"; tail -45 "$O/bench-user.txt"
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf r.tgz r && rm -rf r

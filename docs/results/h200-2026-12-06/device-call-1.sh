#!/usr/bin/env bash
# Device call 1 (2026-12-06): shareable CUDA buffers proven (the GPU sharing tests, two
# processes on pinned and pageable, the NCCL example, the bench's import rows, whether an MPI
# runs there) and the machine facts a per-copy choice for user memory needs (cost-probe.c, with
# the staging workers sleeping or all lingering). Packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
{
    echo "== machine"; nvidia-smi --query-gpu=name,uuid,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
    lscpu | grep -E "Model name|^CPU\(s\)|L2|L3|NUMA|MHz"; echo "ulimit -l: $(ulimit -l)"; grep -E "MemTotal|MemFree" /proc/meminfo
    ls /sys/devices/system/cpu/cpufreq 2>&1 | head -2; cat /sys/devices/system/cpu/cpuidle/current_driver 2>&1
    echo "== MPI"; command -v mpirun mpiexec orterun 2>&1; ldconfig -p | grep -E "libmpi\.so" | head -3
    python3 -c 'from mpi4py import MPI; print(MPI.Get_library_version())' 2>&1 | tail -1
    echo "== NCCL"; python3 -c 'import importlib.util as u; print(u.find_spec("nvidia.nccl").submodule_search_locations[0])' 2>&1
} > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
XFER_REQUIRE_GPU=1 timeout 300 "$B/bin/xfer_cuda_tests" '--gtest_filter=*GpuShare*' > "$O/gpu-share.txt" 2>&1
echo "gpu share exit=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" "$O/gpu-share.txt" | head -20
for b in pinned pageable; do
    XFER_BACKEND=$b XFER_REQUIRE_GPU=1 timeout 120 "$B/bin/xfer_share_tests" '--gtest_filter=TwoProcesses.*' >> "$O/gpu-share.txt" 2>&1
    echo "two processes on $b exit=$?"
done
nccl=$(python3 -c 'import importlib.util as u; print(u.find_spec("nvidia.nccl").submodule_search_locations[0])' 2>/dev/null)
if cc -std=c99 -O2 -Wall -Wextra bindings/c/example_nccl.c -Iapi/include -I"$nccl/include" -I/usr/local/cuda/include \
    -L"$B/lib" -lxfer "$(ls "$nccl"/lib/libnccl.so* | head -1)" -Wl,-rpath,"$B/lib:$nccl/lib" -o /tmp/example_nccl >> "$O/gpu-share.txt" 2>&1; then
    for b in pinned pageable; do XFER_BACKEND=$b timeout 120 /tmp/example_nccl >> "$O/gpu-share.txt" 2>&1; echo "example_nccl on $b exit=$?"; done
else echo "example_nccl did not compile"; fi
tail -4 "$O/gpu-share.txt"
timeout 240 "$B/bin/xfer-tool" bench -t '*-import-*' -r 10 > "$O/bench-import.txt" 2>&1
echo "bench import exit=$?"; tail -8 "$O/bench-import.txt"
timeout 200 "$B/bin/cost-probe" 1024 > "$O/cost-probe.txt" 2>&1; echo "probe exit=$?"
XFER_PAGEABLE_STAGING_LINGER_US=1000000 XFER_PAGEABLE_STAGING_LINGER_WORKERS=64 timeout 100 "$B/bin/cost-probe" 64 > "$O/cost-probe-linger.txt" 2>&1
cat "$O/cost-probe.txt"; tail -7 "$O/cost-probe-linger.txt"
cd "$OUT" && tar czf r.tgz r && rm -rf r

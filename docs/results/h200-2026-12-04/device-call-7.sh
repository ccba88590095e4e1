#!/usr/bin/env bash
# Device call 7 (2026-12-04): shareable CUDA buffers (cuMemCreate device view, memfd host view):
# what the machine offers (MPI, NCCL), the GPU sharing tests in one process, the two-process
# tests on pinned and pageable, example_nccl, and the bench's import rows. Packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
{
    echo "== MPI"; command -v mpirun mpiexec; ls /usr/lib/x86_64-linux-gnu/libmpi* 2>&1 | head -3
    python3 -c 'import mpi4py; print("mpi4py", mpi4py.__version__, mpi4py.get_config())' 2>&1 | tail -2
    python3 -c 'from mpi4py import MPI; print(MPI.Get_library_version())' 2>&1 | tail -2
    find / -xdev -name 'libmpi.so*' 2>/dev/null | head -5
    echo "== NCCL"; python3 -c 'import importlib.util as u; print(u.find_spec("nvidia.nccl").submodule_search_locations[0])'
    echo "== cc"; command -v cc gcc; ls /usr/local/cuda/include/cuda_runtime_api.h
} > "$O/machine.txt" 2>&1
cat "$O/machine.txt"
XFER_REQUIRE_GPU=1 timeout 300 "$B/bin/xfer_cuda_tests" '--gtest_filter=*/GpuShare.*' > "$O/gpu-share.txt" 2>&1
echo "gpu share exit=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$O/gpu-share.txt" | head -20
for b in pinned pageable; do
    XFER_BACKEND=$b timeout 120 "$B/bin/xfer_share_tests" '--gtest_filter=TwoProcesses.*' >> "$O/share-2proc.txt" 2>&1
    echo "two processes on $b exit=$?"
done
grep -E "FAILED|share_peer" "$O/share-2proc.txt" | head -10
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 240 > "$O/gpu-check.log" 2>&1
tail -18 "$O/gpu-check.log"
timeout 400 "$B/bin/xfer-tool" bench -t '*-import-*' -r 10 > "$O/bench-import.txt" 2>&1
cat "$O/bench-import.txt" | tail -12
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf r.tgz r && rm -rf r

#!/usr/bin/env bash
# Device call 5 (2026-12-04): after shareable buffers and the memory observer joined the core:
# gpu-check (the contract suite on all five backends, with BufferShare: a CUDA backend refuses
# XFER_ALLOC_SHAREABLE cleanly, host exports and imports) and the sharing suite (host backend,
# two processes) on the GPU machine. Packed into r.tgz.
set -u
OUT=${1:?out}; O=$OUT/r; mkdir -p "$O"
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib XFER_PLUGIN_PATH=$B/lib/xfer
tools/gpu-check --build-dir "$B" --out "$O/check" --timeout 240 > "$O/gpu-check.log" 2>&1
tail -11 "$O/gpu-check.log"
grep -h "BufferShare" "$O/check/contract.log" | grep -E "OK|FAILED" | head -8
timeout 120 "$B/bin/xfer_share_tests" > "$O/share.txt" 2>&1; echo "share exit=$?"; tail -3 "$O/share.txt"
rm -f "$O/check/contract.log"
cd "$OUT" && tar czf r.tgz r && rm -rf r

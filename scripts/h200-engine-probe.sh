#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The pageable staging engine on a GPU machine, against a carried gpu-carry build: correctness
# (contract suite on all five backends, the CUDA suite) and the figures that choose its
# defaults (bandwidth pinned vs pageable, the staged/direct crossover, workers x chunk sizes,
# sync-async and overlap). Logs go to one tar archive under the out folder.
# Usage: scripts/h200-engine-probe.sh BUILD_DIR OUT_DIR
set -u
build=$(cd "${1:?build dir}" && pwd)
out=${2:?out dir}
mkdir -p "$out/logs"
logs=$(cd "$out/logs" && pwd)
export LD_LIBRARY_PATH="$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XFER_PLUGIN_PATH="$build/lib/xfer"
tool="$build/bin/xfer-tool"
t() { local name=$1; shift; echo "== $name: $*" | tee -a "$logs/index.txt"; timeout 240 "$@" >"$logs/$name.log" 2>&1; echo "exit=$?" | tee -a "$logs/index.txt"; }

nvidia-smi >"$logs/nvidia-smi.log" 2>&1
tools/gpu-check --build-dir "$build" --out "$logs/check" --timeout 400 >"$logs/gpu-check.log" 2>&1
tail -12 "$logs/gpu-check.log"
t bw "$tool" run bandwidth --backend pinned,pageable --sizes 4KiB:1GiB:4 --repeats 10 -f json -o "$logs/bw.json" -q
"$tool" run bandwidth --backend pinned,pageable --sizes 4KiB:1GiB:4 --repeats 3 -q >"$logs/bw-table.log" 2>&1
t bw_allstaged env XFER_PAGEABLE_STAGED_MIN_BYTES=0 "$tool" run bandwidth --backend pageable --sizes 4KiB:16MiB:2 --repeats 10 -f json -o "$logs/bw_allstaged.json" -q
for th in 8 12 16; do for ch in 2MiB 4MiB 8MiB; do
  t "bw1g_t${th}_c${ch}" env XFER_PAGEABLE_STAGING_THREADS=$th XFER_PAGEABLE_CHUNK_SIZE=$ch "$tool" run bandwidth --backend pageable --sizes 64MiB,1GiB --repeats 5 -f json -o "$logs/bw1g_t${th}_c${ch}.json" -q
done; done
t syncasync "$tool" run sync-async --backend pinned,pageable --repeats 5 -q
t overlap "$tool" run overlap --backend pinned,pageable --repeats 5 -q
cd "$out" && tar czf engine-probe.tgz logs && ls -la "$out"
